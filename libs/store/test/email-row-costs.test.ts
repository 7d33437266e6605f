/**
 * What migration 0025 (docs/scaling.md, rows, indexes and WAL per email) must keep true on real
 * PostgreSQL:
 * - the status update the event writer makes per recipient is HOT: no indexed column of
 *   email_logs changes, so no index entry is written (an index on status, last_event,
 *   delivered_at... would make every delivery write one entry per index again);
 * - every filter of GET /v1/email/logs (emailLogs.list) still reads email_logs through an index,
 *   the status filter by walking the tenant's rows newest first (email_logs_tenant_idx) since its
 *   own index was dropped, the recipient filter through lower(recipient).
 */
import { type EmailEvent, parseLogsQuery, ulid } from '@mailyard/contracts';
import type { Db } from '@mailyard/platform';
import { bareSendRow } from '@mailyard/testkit/fixtures';
import { useMigratedDatabase } from '@mailyard/testkit/migrated-database';
import { type PlanNode, explaining } from '@mailyard/testkit/query-plans';
import { emailEvent } from '@mailyard/testkit/webhooks';
import { createTenant, emailLogs, recordEmailEventBatchIn, sends } from '../src';

const database = useMigratedDatabase();
let db: Db;

beforeAll(() => {
  db = database.db();
});

const delivered = (refId: string, emails: string[]): EmailEvent =>
  emailEvent('MAIL_DELIVERED', new Date().toISOString(), { ref_id: refId, email: emails, custom_args: null });

/** A send accepted as the gateway accepts it: the send, its QUEUED log rows, no outbox row. */
async function accept(tenantId: string, emails: string[]) {
  const refId = ulid();
  const copyId = `${refId}.1`;
  await sends.insertAccepted(
    db,
    bareSendRow(refId, tenantId),
    emails.map((recipient) => ({
      copyId,
      recipient,
      recipientDomain: recipient.split('@')[1]!,
      recipientType: 'to' as const,
    })),
    [],
  );
  const { rows } = await db.query<{ id: string; recipient: string }>(
    'SELECT id, recipient FROM email_logs WHERE ref_id = $1 ORDER BY id',
    [refId],
  );
  return { refId, copyId, logs: rows };
}

it('records a delivery with HOT updates of the log rows (no index entry written)', async () => {
  const tenant = await createTenant(db, { name: 'hot', tier: 'standard' });
  const s = await accept(tenant.id, ['a@example.com', 'b@example.com', 'c@example.com']);
  const counts = await db.transaction(async (tx) => {
    const [recorded] = await recordEmailEventBatchIn(tx, [
      {
        tenantId: tenant.id,
        copyId: s.copyId,
        recipients: s.logs.map((l) => ({ logId: l.id, email: l.recipient })),
        event: delivered(
          s.refId,
          s.logs.map((l) => l.recipient),
        ),
        attempt: 1,
      },
    ]);
    expect(recorded?.event).toBe('MAIL_DELIVERED');
    // This transaction's own counters: no flush of the statistics needed.
    const { rows } = await tx.query<{ updated: number; hot: number }>(
      `SELECT pg_stat_get_xact_tuples_updated('email_logs'::regclass)::int AS updated,
              pg_stat_get_xact_tuples_hot_updated('email_logs'::regclass)::int AS hot`,
    );
    return rows[0];
  });
  expect(counts).toEqual({ updated: 3, hot: 3 });
  const { rows } = await db.query<{ status: string }>('SELECT status FROM email_logs WHERE ref_id = $1', [
    s.refId,
  ]);
  expect(rows.map((r) => r.status)).toEqual(['MAIL_DELIVERED', 'MAIL_DELIVERED', 'MAIL_DELIVERED']);
});

describe('GET /v1/email/logs filters read email_logs through an index', () => {
  let tenantId: string;
  beforeAll(async () => {
    tenantId = (await createTenant(db, { name: 'plans', tier: 'standard' })).id;
    const other = (await createTenant(db, { name: 'other', tier: 'standard' })).id;
    // Enough rows of two tenants, spread over sends, domains, recipients and campaigns, that the
    // planner's statistics tell a selective index from a walk.
    for (const t of [tenantId, other]) {
      await db.query(
        `INSERT INTO sends (ref_id, tenant_id, mailer_id, request)
         SELECT $1 || '-s' || g, $1, 'm1', '{}' FROM generate_series(0, 199) g`,
        [t],
      );
      await db.query(
        `INSERT INTO email_logs (id, ref_id, tenant_id, copy_id, recipient, recipient_domain, recipient_type,
                                 status, mailer_id, campaign_id)
         SELECT $1 || lpad(g::text, 6, '0'), $1 || '-s' || (g % 200), $1, $1 || '-s' || (g % 200) || '.1',
                'user' || (g % 500) || '@d' || (g % 40) || '.test', 'd' || (g % 40) || '.test', 'to',
                (ARRAY['QUEUED','MAIL_DELIVERED','MAIL_OPENED','FAILED'])[1 + g % 4], 'm1',
                CASE WHEN g % 10 = 0 THEN 'c' || (g % 30) END
           FROM generate_series(0, 3999) g`,
        [t],
      );
    }
    await db.query('ANALYZE email_logs');
  });

  // The index the page must use, where one filter alone selects few rows; null where the
  // planner may as well walk the tenant's rows newest first (tenant_idx or the primary key,
  // both ULID order) and stop after a page: there, only "not a sequential scan" is asserted.
  const cases: Array<[string, Record<string, string>, string | null]> = [
    ['no filter', {}, null],
    ['status', { status: 'FAILED' }, null],
    ['recipient email', { email: 'USER7@d7.test' }, 'email_logs_recipient_lower_idx'],
    ['recipient domain', { domain: 'd3.test' }, 'email_logs_domain_idx'],
    ['refId', { refId: '' }, 'email_logs_ref_id_idx'],
    ['campaignId', { campaignId: 'c10' }, null],
  ];
  it.each(cases)('%s', async (_name, input, index) => {
    const query = { ...input, ...(input.refId === '' ? { refId: `${tenantId}-s17` } : {}) };
    const parsed = parseLogsQuery(query);
    if (!parsed.success) throw new Error(parsed.error);
    const plans: PlanNode[][] = [];
    const page = await db.transaction(async (tx) => {
      // A sequential scan only when no index can serve the statement at all.
      await tx.query('SET LOCAL enable_seqscan = off');
      return emailLogs.list(explaining(tx, /FROM email_logs/, plans), tenantId, parsed.data);
    });
    expect(page.items.length).toBeGreaterThan(0);
    const [pagePlan, countPlan] = plans;
    for (const plan of [pagePlan!, countPlan!]) {
      const onLogs = plan.filter((n) => n['Relation Name'] === 'email_logs');
      expect(onLogs.map((n) => n['Node Type'])).not.toContain('Seq Scan');
    }
    // The page (newest first, LIMIT pageSize + 1) through the index meant for the filter.
    if (index) expect(pagePlan!.map((n) => n['Index Name']).filter(Boolean)).toContain(index);
  });
});
