/**
 * The retention sweeper's behaviour, shared by the real-server file (PostgreSQL, Redis lease) and the
 * embedded one (PGlite, in-process lease): rows past their duration go and younger ones stay, rows
 * still in work stay whatever their age, no dangling rows (a send with its logs, a delivery with its
 * attempts), a body shared by a replay stays while the replay may still use it, a sweep cut short
 * leaves only expired rows and the next removes them, and the lease lets one sweeper run at a time.
 * Sweeps are driven directly with a clock the test passes (no waiting for the interval).
 */
import { ulid } from '@mailyard/contracts';
import {
  type Db,
  type Kv,
  Sealer,
  createLogger,
  generateSecretKey,
  metricsRegistry,
  parseSecretKey,
} from '@mailyard/platform';
import { type RetentionSetting, createTenant } from '@mailyard/store';
import { dkimKeyPair, insertDomainMailer } from '@mailyard/testkit/fixtures';
import { retentionJob } from '../../src/retention/job';
import type { RetentionSettings } from '../../src/retention/settings';
import { sweepExpired } from '../../src/retention/sweep';
import { insertDmarcReport, insertTlsReport } from './report-rows';

const logger = createLogger('retention-test', process.env.TEST_LOG_LEVEL ?? 'error');
const S = 1000;

const every = (ms: number): Record<RetentionSetting, number> => ({
  RETENTION_LOGS: ms,
  RETENTION_EVENTS: ms,
  RETENTION_INBOUND_RAW: ms,
  RETENTION_WEBHOOK_DELIVERIES: ms,
  RETENTION_AUDIT: ms,
  RETENTION_REPORTS: ms,
});

export function retentionSuite(open: () => { db: () => Db; kv: () => Kv }) {
  const stores = open();
  let db: Db;
  let tenantId: string;

  beforeAll(async () => {
    db = stores.db();
    tenantId = (await createTenant(db, { name: 'retention', tier: 'standard' })).id;
  });

  const count = async (sql: string, params: unknown[] = []) =>
    Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM (${sql}) q`, params)).rows[0]!.n);

  /** A send of `outcomes.length` recipients at `at`; null outcome = still queued. */
  async function send(at: Date, outcomes: Array<string | null>): Promise<string> {
    const refId = ulid();
    await db.query(
      `INSERT INTO sends (ref_id, tenant_id, mailer_id, request, created_at) VALUES ($1, $2, 'm1', '{}', $3)`,
      [refId, tenantId, at],
    );
    for (const [i, outcome] of outcomes.entries())
      await db.query(
        `INSERT INTO email_logs (id, ref_id, tenant_id, copy_id, recipient, recipient_domain, recipient_type,
                                 mailer_id, status, send_outcome, created_at)
         VALUES ($1, $2, $3, $2 || '.1', $4, 'x.test', 'to', 'm1', $5, $6, $7)`,
        [ulid(), refId, tenantId, `r${i}@x.test`, outcome ?? 'QUEUED', outcome, at],
      );
    return refId;
  }

  async function event(refId: string, at: Date): Promise<void> {
    await db.query(
      `INSERT INTO email_events (tenant_id, ref_id, copy_id, event, attempt, event_at, payload, recipient_key)
       VALUES ($1, $2, $2 || '.1', 'MAIL_DELIVERED', 0, $3, '{}', $4)`,
      [tenantId, refId, at, ulid()],
    );
  }

  async function inbound(at: Date, status: 'stored' | 'processed'): Promise<string> {
    const id = `inmsg_${ulid()}`;
    await db.query(
      `INSERT INTO inbound_messages (id, recipients, raw, size, status, received_at)
       VALUES ($1, '[]', $2, 3, $3, $4)`,
      [id, Buffer.from('raw'), status, at],
    );
    return id;
  }

  async function delivery(
    at: Date,
    status: 'pending' | 'retrying' | 'delivered' | 'dropped',
    bodyOf?: string,
  ): Promise<string> {
    const id = `whd_${ulid()}`;
    await db.query(
      `INSERT INTO webhook_deliveries (id, tenant_id, target_kind, webhook_id, event_types, body, body_of,
                                       status, created_at)
       VALUES ($1, $2, 'webhook', 'h1', '{X}', $3, $4, $5, $6)`,
      [id, tenantId, bodyOf ? null : `body of ${id}`, bodyOf ?? null, status, at],
    );
    await db.query(
      'INSERT INTO webhook_delivery_attempts (delivery_id, attempt, at, latency_ms) VALUES ($1, 1, $2, 5)',
      [id, at],
    );
    return id;
  }

  const exists = (table: string, column: string, id: string) =>
    count(`SELECT 1 FROM ${table} WHERE ${column} = $1`, [id]).then((n) => n > 0);

  it('removes rows past their duration after a sweep, keeps younger ones, whatever the duration', async () => {
    const now = new Date();
    const born = new Date(now.getTime() - 10 * S);
    const logsOf = (ref: string) => count('SELECT 1 FROM email_logs WHERE ref_id = $1', [ref]);
    const ref = await send(born, ['MAIL_DELIVERED', 'SMTP_ERROR']);
    await event(ref, born);
    const msg = await inbound(born, 'processed');
    const hook = await delivery(born, 'delivered');
    // 15 s: not yet at 10 s of age...
    await sweepExpired({ db, logger, durations: every(15 * S), now });
    expect(await logsOf(ref)).toBe(2);
    expect(await exists('email_events', 'ref_id', ref)).toBe(true);
    expect(await exists('inbound_messages', 'id', msg)).toBe(true);
    expect(await exists('webhook_deliveries', 'id', hook)).toBe(true);
    // ...gone at the first sweep past 15 s.
    const later = new Date(born.getTime() + 15 * S + 1);
    const report = await sweepExpired({ db, logger, durations: every(15 * S), now: later });
    expect(report.interrupted).toBe(false);
    expect(await logsOf(ref)).toBe(0);
    expect(await exists('sends', 'ref_id', ref)).toBe(false);
    expect(await exists('email_events', 'ref_id', ref)).toBe(false);
    expect(await exists('inbound_messages', 'id', msg)).toBe(false);
    expect(await exists('webhook_deliveries', 'id', hook)).toBe(false);
    expect(await exists('webhook_delivery_attempts', 'delivery_id', hook)).toBe(false);
    expect(report.removed).toMatchObject({ email_logs: 2, sends: 1, email_events: 1 });
    // What the gateway's /metrics shows.
    const metrics = await metricsRegistry.metrics();
    expect(metrics).toMatch(/^mailyard_retention_rows_removed_total\{table="email_logs"\} [1-9]/m);
    expect(metrics).toMatch(/^mailyard_retention_sweep_duration_seconds_count [1-9]/m);
  });

  it('uses each setting for its own table', async () => {
    const now = new Date();
    const born = new Date(now.getTime() - 10 * S);
    const ref = await send(born, ['MAIL_DELIVERED']);
    await event(ref, born);
    const msg = await inbound(born, 'processed');
    const hook = await delivery(born, 'delivered');
    const durations = { ...every(3600 * S), RETENTION_EVENTS: 5 * S, RETENTION_INBOUND_RAW: 5 * S };
    await sweepExpired({ db, logger, durations, now });
    expect(await exists('sends', 'ref_id', ref)).toBe(true);
    expect(await exists('email_logs', 'ref_id', ref)).toBe(true);
    expect(await exists('email_events', 'ref_id', ref)).toBe(false);
    expect(await exists('inbound_messages', 'id', msg)).toBe(false);
    expect(await exists('webhook_deliveries', 'id', hook)).toBe(true);
  });

  it('keeps what is still in work, whatever its age, and a send while any of its logs stays', async () => {
    const now = new Date();
    const old = new Date(now.getTime() - 3600 * S);
    const young = new Date(now.getTime() - 100);
    const partly = await send(old, ['MAIL_DELIVERED', null]);
    const fresh = await send(young, ['MAIL_DELIVERED']);
    const stored = await inbound(old, 'stored');
    const due = await delivery(old, 'retrying');
    const pending = await delivery(old, 'pending');
    await sweepExpired({ db, logger, durations: every(S), now });
    // The delivered recipient's row went, the queued one stayed, and so did their send.
    expect(await count('SELECT 1 FROM email_logs WHERE ref_id = $1', [partly])).toBe(1);
    expect(await exists('sends', 'ref_id', partly)).toBe(true);
    expect(await exists('email_logs', 'ref_id', fresh)).toBe(true);
    expect(await exists('sends', 'ref_id', fresh)).toBe(true);
    expect(await exists('inbound_messages', 'id', stored)).toBe(true);
    expect(await exists('webhook_deliveries', 'id', due)).toBe(true);
    expect(await exists('webhook_deliveries', 'id', pending)).toBe(true);
    // Once the last copy ends, the next sweep takes the row and then the send.
    await db.query(`UPDATE email_logs SET send_outcome = 'MAIL_DELIVERED' WHERE ref_id = $1`, [partly]);
    await sweepExpired({ db, logger, durations: every(S), now });
    expect(await exists('email_logs', 'ref_id', partly)).toBe(false);
    expect(await exists('sends', 'ref_id', partly)).toBe(false);
    // No log row anywhere without its send, no attempt without its delivery.
    expect(
      await count(
        'SELECT 1 FROM email_logs l WHERE NOT EXISTS (SELECT 1 FROM sends s WHERE s.ref_id = l.ref_id)',
      ),
    ).toBe(0);
    expect(
      await count(
        'SELECT 1 FROM webhook_delivery_attempts a WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = a.delivery_id)',
      ),
    ).toBe(0);
  });

  it('takes an expired copy a provider accepted, whose callback never came', async () => {
    const now = new Date();
    const old = new Date(now.getTime() - 3600 * S);
    const accepted = await send(old, [null]);
    const queued = await send(old, [null]);
    await db.query('UPDATE email_logs SET provider_accepted_at = $2 WHERE ref_id = $1', [accepted, old]);
    await sweepExpired({ db, logger, durations: every(S), now });
    expect(await exists('email_logs', 'ref_id', accepted)).toBe(false);
    expect(await exists('sends', 'ref_id', accepted)).toBe(false);
    expect(await exists('email_logs', 'ref_id', queued)).toBe(true);
  });

  it('expires the audit log and processed provider callbacks by their own settings', async () => {
    const now = new Date();
    const old = new Date(now.getTime() - 3600 * S);
    const young = new Date(now.getTime() - 100);
    const audit = async (at: Date) => {
      const id = ulid();
      await db.query(
        `INSERT INTO audit_log (id, tenant_id, at, action, resource) VALUES ($1, $2, $3, 'create', 'template')`,
        [id, tenantId, at],
      );
      return id;
    };
    const batch = async (at: Date, processed: boolean) => {
      const id = `cb_${ulid()}`;
      await db.query(
        `INSERT INTO provider_callback_batches (id, tenant_id, mailer_id, provider, body, received_at, processed_at)
         VALUES ($1, $2, 'm1', 'sparkpost', '[]', $3, $4)`,
        [id, tenantId, at, processed ? at : null],
      );
      return id;
    };
    const oldAudit = await audit(old);
    const youngAudit = await audit(young);
    const done = await batch(old, true);
    const todo = await batch(old, false);
    const eventId = ulid();
    await db.query(
      `INSERT INTO provider_callback_events (mailer_id, event_id, tenant_id, processed_at) VALUES ('m1', $1, $2, $3)`,
      [eventId, tenantId, old],
    );
    // The audit log keeps its entries for its own (longer) duration...
    await sweepExpired({ db, logger, durations: { ...every(S), RETENTION_AUDIT: 7200 * S }, now });
    expect(await exists('audit_log', 'id', oldAudit)).toBe(true);
    expect(await exists('provider_callback_batches', 'id', done)).toBe(false);
    expect(await exists('provider_callback_batches', 'id', todo)).toBe(true);
    expect(await exists('provider_callback_events', 'event_id', eventId)).toBe(false);
    // ...and loses them past it.
    await sweepExpired({ db, logger, durations: every(S), now });
    expect(await exists('audit_log', 'id', oldAudit)).toBe(false);
    expect(await exists('audit_log', 'id', youngAudit)).toBe(true);
  });

  it('expires DMARC and TLS reports by RETENTION_REPORTS, their rows with them', async () => {
    const now = new Date();
    const receivedAt = (at: Date) => (table: string, id: string) =>
      db.query(`UPDATE ${table} SET received_at = $2 WHERE id = $1`, [id, at]);
    const sealer = new Sealer(parseSecretKey(generateSecretKey()));
    const domainId = await insertDomainMailer(db, sealer, tenantId, {
      domain: `reports-${ulid().toLowerCase()}.test`,
      key: dkimKeyPair(),
    });
    const dmarc = () =>
      insertDmarcReport(db, {
        tenantId,
        domainId,
        orgName: 'google.com',
        begin: '2026-01-01T00:00:00Z',
        end: '2026-01-01T23:59:59Z',
        rows: [{ source_ip: '192.0.2.1', count: 3, dkim: 'pass', spf: 'pass' }],
      });
    const tls = () =>
      insertTlsReport(db, {
        tenantId,
        domainId,
        orgName: 'Google Inc.',
        start: '2026-01-01T00:00:00Z',
        end: '2026-01-01T23:59:59Z',
        policies: [{ successful: 10, failed: 0 }],
      });
    const [oldDmarc, youngDmarc, oldTls] = [await dmarc(), await dmarc(), await tls()];
    await receivedAt(new Date(now.getTime() - 3600 * S))('dmarc_reports', oldDmarc);
    await receivedAt(new Date(now.getTime() - 3600 * S))('tls_reports', oldTls);
    await sweepExpired({ db, logger, durations: { ...every(S), RETENTION_REPORTS: 7200 * S }, now });
    expect(await exists('dmarc_reports', 'id', oldDmarc)).toBe(true);
    await sweepExpired({ db, logger, durations: every(S), now });
    expect(await exists('dmarc_reports', 'id', oldDmarc)).toBe(false);
    expect(await exists('dmarc_report_rows', 'report_id', oldDmarc)).toBe(false);
    expect(await exists('tls_reports', 'id', oldTls)).toBe(false);
    expect(await exists('tls_report_policies', 'report_id', oldTls)).toBe(false);
    expect(await exists('dmarc_reports', 'id', youngDmarc)).toBe(true);
  });

  it('keeps a shared body while a replay that uses it is younger or still due', async () => {
    const now = new Date();
    const old = new Date(now.getTime() - 3600 * S);
    const young = new Date(now.getTime() - 100);
    const origin = await delivery(old, 'delivered');
    const replay = await delivery(young, 'pending', origin);
    const bodyOf = async (id: string) =>
      (
        await db.query<{ body: string | null }>(
          `SELECT COALESCE(d.body, o.body) AS body FROM webhook_deliveries d
             LEFT JOIN webhook_deliveries o ON o.id = d.body_of WHERE d.id = $1`,
          [id],
        )
      ).rows[0]?.body;
    await sweepExpired({ db, logger, durations: every(S), now });
    expect(await exists('webhook_deliveries', 'id', origin)).toBe(true);
    expect(await bodyOf(replay)).toBe(`body of ${origin}`);
    // The replay delivered and, later, expired itself: both go, with their attempts.
    await db.query(`UPDATE webhook_deliveries SET status = 'delivered' WHERE id = $1`, [replay]);
    const afterReplay = new Date(young.getTime() + 2 * S);
    await sweepExpired({ db, logger, durations: every(S), now: afterReplay });
    expect(await exists('webhook_deliveries', 'id', origin)).toBe(false);
    expect(await exists('webhook_deliveries', 'id', replay)).toBe(false);
    expect(await exists('webhook_delivery_attempts', 'delivery_id', replay)).toBe(false);
    // An expired replay of a kept origin goes alone; the origin's body stays for the other.
    const origin2 = await delivery(old, 'delivered');
    const oldReplay = await delivery(old, 'dropped', origin2);
    const dueReplay = await delivery(old, 'retrying', origin2);
    await sweepExpired({ db, logger, durations: every(S), now });
    expect(await exists('webhook_deliveries', 'id', oldReplay)).toBe(false);
    expect(await bodyOf(dueReplay)).toBe(`body of ${origin2}`);
  });

  it('a sweep cut short leaves only expired rows, and the next one removes them', async () => {
    const now = new Date();
    const old = new Date(now.getTime() - 3600 * S);
    const ref = await send(old, ['MAIL_DELIVERED']);
    for (let i = 0; i < 25; i++) await event(ref, new Date(old.getTime() + i));
    const events = () => count('SELECT 1 FROM email_events WHERE ref_id = $1', [ref]);
    const stop = new AbortController();
    const cut = await sweepExpired({
      db,
      logger,
      durations: every(S),
      now,
      batchSize: 10,
      signal: stop.signal,
      onBatch: (table, removed) => {
        if (table === 'email_events' && removed > 0) stop.abort();
      },
    });
    expect(cut.interrupted).toBe(true);
    expect(await events()).toBe(15);
    const rest = await sweepExpired({ db, logger, durations: every(S), now, batchSize: 10 });
    expect(rest.removed.email_events).toBe(15);
    expect(await events()).toBe(0);
  });

  it('lets one sweeper run at a time (lease), the other skips its pass', async () => {
    const config: RetentionSettings = { ...every(S), RETENTION_SWEEP_INTERVAL: 3600 * S };
    const old = new Date(Date.now() - 3600 * S);
    const ref = await send(old, ['MAIL_DELIVERED']);
    await event(ref, old);
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let entered!: () => void;
    const inside = new Promise<void>((r) => {
      entered = r;
    });
    const running: string[] = [];
    const job = (name: string, hold: boolean) =>
      retentionJob({
        db,
        kv: stores.kv(),
        logger,
        config,
        sweep: {
          onBatch: async () => {
            running.push(name);
            if (hold) {
              entered();
              await gate;
            }
          },
        },
      });
    const a = job('a', true);
    const b = job('b', false);
    const first = a.runOnce();
    await inside;
    expect(await b.runOnce()).toBe('skipped');
    release();
    expect(await first).toBe('ran');
    expect(running.every((n) => n === 'a')).toBe(true);
    // Released: the other replica takes the next pass.
    expect(await b.runOnce()).toBe('ran');
    expect(running).toContain('b');
    expect(await exists('email_events', 'ref_id', ref)).toBe(false);
  });
}
