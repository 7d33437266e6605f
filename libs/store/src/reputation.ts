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
 *   closed and the rows of its window cleared, so the rates count only later copies.
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

/** The scope's window: its last `window` copies sent, not cleared by a resume. */
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
              WHERE tenant_id = $1 AND ${col} = $2 AND NOT cleared
              ORDER BY seq DESC LIMIT $3) w`,
    [tenantId, key, window],
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
  // Domains first: a mailer is evaluated only for bounces of From domains not paused (a domain
  // pause already stops that traffic; a mailer pause is for a mailer whose mail goes bad across
  // domains, e.g. an SMTP relay sending for many From domains).
  const scopes = new Map<string, { tenantId: string; scope: PauseScope; key: string; domains: string[] }>();
  for (const t of [...touched].sort((a, b) => a.domain.localeCompare(b.domain))) {
    const d = `${t.tenant_id}\0domain\0${t.domain}`;
    if (!scopes.has(d) && t.domain !== '')
      scopes.set(d, { tenantId: t.tenant_id, scope: 'domain', key: t.domain, domains: [t.domain] });
  }
  // Sorted, so concurrent evaluations take the open-pause index entries in one order (no deadlock).
  for (const t of [...touched].sort((a, b) => a.mailer_id.localeCompare(b.mailer_id))) {
    const m = `${t.tenant_id}\0mailer\0${t.mailer_id}`;
    const entry = scopes.get(m) ?? {
      tenantId: t.tenant_id,
      scope: 'mailer' as const,
      key: t.mailer_id,
      domains: [],
    };
    entry.domains.push(t.domain);
    scopes.set(m, entry);
  }
  const pausedDomains = new Set<string>();
  const made: SendingPausedEvent[] = [];
  for (const s of scopes.values()) {
    const live = s.domains.filter((d) => !pausedDomains.has(`${s.tenantId}\0${d}`));
    if (live.length === 0) continue;
    if (await openPause(tx, s.tenantId, s.scope, s.key)) {
      if (s.scope === 'domain') pausedDomains.add(`${s.tenantId}\0${s.key}`);
      continue;
    }
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
    if (s.scope === 'domain') pausedDomains.add(`${s.tenantId}\0${s.key}`);
    const event: SendingPausedEvent = {
      event: 'SENDING_PAUSED',
      success: false,
      details: {
        scope: s.scope,
        domain: live[0]!,
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
 * Resumes the scope: closes its open pause and, in the same statement, clears the rows of its
 * window (the last `window` not yet cleared): they count in no scope any more, so neither this
 * scope nor the other scopes of the same copies pause again on the old bounces. False when it was
 * not paused (nothing changes).
 */
export async function resumeSending(
  db: Queryable,
  tenantId: string,
  scope: PauseScope,
  key: string,
  window: number,
): Promise<boolean> {
  const col = SCOPE_COLUMN[scope];
  const { rows } = await db.query<{ closed: number }>(
    `WITH closed AS (
       UPDATE sending_pauses SET resumed_at = now()
        WHERE tenant_id = $1 AND scope = $2 AND key = $3 AND resumed_at IS NULL RETURNING id
     ), cleared AS (
       UPDATE reputation_sends SET cleared = true
        WHERE EXISTS (SELECT 1 FROM closed)
          AND log_id IN (SELECT log_id FROM reputation_sends WHERE tenant_id = $1 AND ${col} = $3 AND NOT cleared
                       ORDER BY seq DESC LIMIT $4)
     )
     SELECT count(*)::int AS closed FROM closed`,
    [tenantId, scope, key, window],
  );
  return rows[0]!.closed > 0;
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
