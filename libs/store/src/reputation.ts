/**
 * Sender reputation and automatic pause (docs/deliverability.md "Reputation and automatic pause",
 * migration 0037). The counting itself is done by the single event writer (email-events.ts): the
 * statement that records a terminal send event inserts the copy's `reputation_sends` row, and the
 * one that records an invalid-recipient bounce or a complaint sets its flag, so a redelivered
 * event (no new email_events row) counts nothing. This module:
 * - evaluates, after such a bounce or complaint, the windows of the scopes it touched (its From
 *   domain and its mailer) and pauses a scope above a threshold: the `sending_pauses` row and its
 *   SENDING_PAUSED outbox row in the caller's transaction, once (the open-pause unique index);
 * - reads a scope's window and pause (GET /v1/domain/{domain}/reputation);
 * - resumes a scope (POST /v1/domain/{domain}/resume, POST /v1/mailer/{id}/enable): the pause is
 *   closed and its resume mark (the highest seq then) makes the rates count only later copies.
 * Thresholds come in as ReputationSettings (REPUTATION_WINDOW, PAUSE_* settings, core config);
 * the event writer's default is the process's (setReputationSettings at service start).
 */
import {
  BusMessages,
  type PauseMetric,
  type PauseScope,
  REPUTATION_DEFAULTS,
  type ReputationSettings,
  type ReputationWindow,
  type SendingPausedEvent,
  breachOf,
} from '@mailyard/contracts';
import { type Queryable, writeOutbox } from '@mailyard/platform';

let processSettings: ReputationSettings = REPUTATION_DEFAULTS;

/** The thresholds this process's event writer evaluates with (each service's start sets them). */
export function setReputationSettings(s: ReputationSettings): void {
  processSettings = s;
}
export const reputationSettings = (): ReputationSettings => processSettings;

export interface OpenPause {
  scope: PauseScope;
  key: string;
  metric: PauseMetric;
  rate: number;
  window: number;
  threshold: number;
  pausedAt: string;
}

type PauseRow = {
  scope: PauseScope;
  key: string;
  metric: PauseMetric;
  rate: number;
  window_n: number;
  threshold: number;
  paused_at: Date;
};
export const toOpenPause = (r: PauseRow): OpenPause => ({
  scope: r.scope,
  key: r.key,
  metric: r.metric,
  rate: r.rate,
  window: r.window_n,
  threshold: r.threshold,
  pausedAt: r.paused_at.toISOString(),
});

const SCOPE_COLUMN: Record<PauseScope, string> = { domain: 'domain', mailer: 'mailer_id' };

/** The scope's window: its last `window` copies sent after its last resume mark. */
export async function readWindow(
  db: Queryable,
  tenantId: string,
  scope: PauseScope,
  key: string,
  window: number,
): Promise<ReputationWindow> {
  const col = SCOPE_COLUMN[scope];
  const { rows } = await db.query<{ sent: number; bounces: number; complaints: number }>(
    `SELECT count(*)::int AS sent, count(*) FILTER (WHERE invalid_bounce)::int AS bounces,
            count(*) FILTER (WHERE complaint)::int AS complaints
       FROM (SELECT invalid_bounce, complaint FROM reputation_sends
              WHERE tenant_id = $1 AND ${col} = $2
                AND seq > COALESCE((SELECT max(resume_seq) FROM sending_pauses
                                     WHERE tenant_id = $1 AND scope = $3 AND key = $2 AND resumed_at IS NOT NULL), 0)
              ORDER BY seq DESC LIMIT $4) w`,
    [tenantId, key, scope, window],
  );
  const r = rows[0]!;
  return { sent: r.sent, invalidRecipientBounces: r.bounces, complaints: r.complaints };
}

/** The scope's open pause, or null. */
export async function openPause(
  db: Queryable,
  tenantId: string,
  scope: PauseScope,
  key: string,
): Promise<OpenPause | null> {
  const { rows } = await db.query<PauseRow>(
    `SELECT scope, key, metric, rate, window_n, threshold, paused_at FROM sending_pauses
      WHERE tenant_id = $1 AND scope = $2 AND key = $3 AND resumed_at IS NULL`,
    [tenantId, scope, key],
  );
  return rows[0] ? toOpenPause(rows[0]) : null;
}

/** Most scopes one evaluation looks at (a large batch of bounces of many senders). */
const MAX_SCOPES = 200;

/**
 * After bounces or complaints of log rows `logIds` were counted (inside the recording
 * transaction `tx`): every scope they belong to that is not paused and whose window now breaches
 * a threshold pauses, with its SENDING_PAUSED outbox row. Returns the pauses made.
 */
export async function evaluatePausesIn(
  tx: Queryable,
  logIds: readonly string[],
  settings: ReputationSettings,
): Promise<SendingPausedEvent[]> {
  if (logIds.length === 0) return [];
  const { rows: touched } = await tx.query<{ tenant_id: string; domain: string; mailer_id: string }>(
    `SELECT DISTINCT tenant_id, domain, mailer_id FROM reputation_sends WHERE log_id = ANY($1::text[]) LIMIT ${MAX_SCOPES}`,
    [logIds],
  );
  const scopes = new Map<string, { tenantId: string; scope: PauseScope; key: string; domain: string }>();
  for (const t of touched) {
    scopes.set(`${t.tenant_id}\0domain\0${t.domain}`, {
      tenantId: t.tenant_id,
      scope: 'domain',
      key: t.domain,
      domain: t.domain,
    });
    scopes.set(`${t.tenant_id}\0mailer\0${t.mailer_id}`, {
      tenantId: t.tenant_id,
      scope: 'mailer',
      key: t.mailer_id,
      domain: t.domain,
    });
  }
  const made: SendingPausedEvent[] = [];
  for (const s of scopes.values()) {
    if (s.scope === 'domain' && s.key === '') continue;
    if (await openPause(tx, s.tenantId, s.scope, s.key)) continue;
    const w = await readWindow(tx, s.tenantId, s.scope, s.key, settings.window);
    const breach = breachOf(w, settings);
    if (!breach) continue;
    const { rows } = await tx.query<{ paused_at: Date }>(
      `INSERT INTO sending_pauses (tenant_id, scope, key, metric, rate, window_n, threshold)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (tenant_id, scope, key) WHERE resumed_at IS NULL DO NOTHING
       RETURNING paused_at`,
      [s.tenantId, s.scope, s.key, breach.metric, breach.rate, w.sent, breach.threshold],
    );
    if (!rows[0]) continue;
    const event: SendingPausedEvent = {
      event: 'SENDING_PAUSED',
      success: false,
      details: {
        scope: s.scope,
        domain: s.domain,
        ...(s.scope === 'mailer' ? { mailer_id: s.key } : {}),
        metric: breach.metric,
        rate: breach.rate,
        window: w.sent,
        threshold: breach.threshold,
        paused_at: rows[0].paused_at.toISOString(),
      },
    };
    await writeOutbox(tx, BusMessages.sendingPaused, event, { tenantId: s.tenantId });
    made.push(event);
  }
  return made;
}

/**
 * Resumes the scope: closes its open pause and marks the window (only copies sent from now on
 * count). False when it was not paused (nothing changes, no mark).
 */
export async function resumeSending(
  db: Queryable,
  tenantId: string,
  scope: PauseScope,
  key: string,
): Promise<boolean> {
  const res = await db.query(
    `UPDATE sending_pauses SET resumed_at = now(),
            resume_seq = COALESCE((SELECT max(seq) FROM reputation_sends), 0)
      WHERE tenant_id = $1 AND scope = $2 AND key = $3 AND resumed_at IS NULL`,
    [tenantId, scope, key],
  );
  return res.rowCount > 0;
}

export interface ScopeReputation extends ReputationWindow {
  paused: OpenPause | null;
}

export async function scopeReputation(
  db: Queryable,
  tenantId: string,
  scope: PauseScope,
  key: string,
  window: number,
): Promise<ScopeReputation> {
  const [w, paused] = await Promise.all([
    readWindow(db, tenantId, scope, key, window),
    openPause(db, tenantId, scope, key),
  ]);
  return { ...w, paused };
}

/** Most mailers one domain's reputation lists (those that sent from it most recently). */
export const REPUTATION_MAX_MAILERS = 50;

/** The mailers that sent from `domain` among its last `window` copies, most recent first. */
export async function mailersOfDomain(
  db: Queryable,
  tenantId: string,
  domain: string,
  window: number,
): Promise<string[]> {
  const { rows } = await db.query<{ mailer_id: string }>(
    `SELECT mailer_id FROM (SELECT mailer_id, seq FROM reputation_sends WHERE tenant_id = $1 AND domain = $2
                             ORDER BY seq DESC LIMIT $3) w
      GROUP BY mailer_id ORDER BY max(seq) DESC LIMIT ${REPUTATION_MAX_MAILERS}`,
    [tenantId, domain, window],
  );
  return rows.map((r) => r.mailer_id);
}

/** Whether the tenant has sent from `domain` or has a pause of it (a domain it has not registered). */
export async function hasSentFrom(db: Queryable, tenantId: string, domain: string): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM reputation_sends WHERE tenant_id = $1 AND domain = $2
     UNION ALL SELECT 1 FROM sending_pauses WHERE tenant_id = $1 AND scope = 'domain' AND key = $2 LIMIT 1`,
    [tenantId, domain],
  );
  return rows.length > 0;
}
