/**
 * The dispatcher's claim statement against a backlog, on the real PostgreSQL: `BENCH_BACKLOG`
 * (20000) deliveries due for one endpoint (a history backfill) and `BENCH_OTHERS` (10) endpoints
 * with a few each. It runs claim/record rounds the way the dispatcher does (the backlog endpoint
 * at its concurrency limit, the others delivered) and prints the claim's EXPLAIN (ANALYZE,
 * BUFFERS) before and after, its mean time, and webhook_deliveries' tuple and index statistics
 * (HOT updates, dead tuples, index sizes), so index bloat and plans that scan the backlog show.
 *
 *   pnpm exec tsx bench/webhooks/claim-plan.ts
 */
import { loadavg } from 'node:os';
import { IdPrefix, WEBHOOK_EVENT_TOGGLES, newId } from '@mailyard/contracts';
import { type Queryable, closeContext, configFrom, createLogger, openContext } from '@mailyard/platform';
import {
  type AttemptRecord,
  claimDueDeliveries,
  createTenant,
  insertDeliveries,
  recordDeliveryAttempts,
  webhooks,
} from '@mailyard/store';
import { createTestDatabase, createTestVhost, serverEnv } from '@mailyard/testkit/servers';
import { runMain } from '../support/proc';

const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 20000);
const OTHERS = Number(process.env.BENCH_OTHERS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1000);

async function main() {
  const db = await createTestDatabase();
  const vhost = createTestVhost();
  const ctx = await openContext(
    configFrom({ ...serverEnv(db, vhost), LOG_LEVEL: 'error' }),
    createLogger('bench', 'error'),
  );
  try {
    const tenant = await createTenant(ctx.db, { name: 'claim', tier: 'enterprise' });
    const hooks: string[] = [];
    for (let i = 0; i <= OTHERS; i++) {
      const id = newId(IdPrefix.emailEventsWebhook);
      // one webhook per event type per account: the others are "mailer" targets of the same tenant
      if (i === 0)
        await webhooks.create(ctx.db, tenant.id, {
          id,
          event: 'EMAIL_EVENT',
          url: 'https://example.com/backlog',
          events: Object.fromEntries(WEBHOOK_EVENT_TOGGLES.map((t) => [t, true])) as never,
          headerNames: [],
          headersSealed: null,
          secretSealed: ctx.sealer.seal(`whsec_${Buffer.alloc(32, 1).toString('base64')}`),
        });
      hooks.push(id);
    }
    const body = JSON.stringify([{ event: 'MAIL_DELIVERED', details: { x: 'y'.repeat(400) } }]);
    const add = async (webhookId: string, n: number, kind: 'webhook' | 'mailer') => {
      for (let i = 0; i < n; i += 1000)
        await insertDeliveries(
          ctx.db,
          Array.from({ length: Math.min(1000, n - i) }, () => ({
            tenantId: tenant.id,
            targetKind: kind,
            webhookId,
            eventTypes: ['MAIL_DELIVERED'],
            body,
          })),
        );
    };
    await add(hooks[0]!, BACKLOG, 'webhook');
    for (const h of hooks.slice(1)) await add(h, 20, 'mailer');
    await ctx.db.query('ANALYZE webhook_deliveries');

    const plans: string[][] = [];
    const explaining: Queryable = {
      query: (async (sql: string, params?: unknown[]) => {
        const r = await ctx.db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
        plans.push(r.rows.map((x) => x['QUERY PLAN']));
        return { rows: [] };
      }) as never,
    } as Queryable;
    const claimOpts = (running: Map<string, number>) => ({
      limit: 256,
      leaseMs: 15_000,
      perTarget: 8,
      running,
    });
    await claimDueDeliveries(explaining, claimOpts(new Map()));

    // Rounds as the dispatcher runs them: the backlog endpoint holds 8, gets 4 outcomes per round
    // (delivered) and 4 more claimed; the others get new rows and are delivered.
    let claimMs = 0;
    const held = new Map<string, number>([[hooks[0]!, 4]]);
    for (let r = 0; r < ROUNDS; r++) {
      if (r % 10 === 0) for (const h of hooks.slice(1)) await add(h, 2, 'mailer');
      const t = performance.now();
      const rows = await claimDueDeliveries(ctx.db, claimOpts(held));
      claimMs += performance.now() - t;
      const records: AttemptRecord[] = rows.map((row) => ({
        deliveryId: row.id,
        attempt: 1,
        outcome: { at: new Date(), statusCode: 200, latencyMs: 5, error: '', next: { status: 'delivered' } },
      }));
      await recordDeliveryAttempts(ctx.db, records);
    }
    await claimDueDeliveries(explaining, claimOpts(held));
    await new Promise((r) => setTimeout(r, 600));
    const { rows: stats } = await ctx.db.query(
      `SELECT n_tup_ins, n_tup_upd, n_tup_hot_upd, n_live_tup, n_dead_tup, autovacuum_count, last_autovacuum
         FROM pg_stat_user_tables WHERE relname = 'webhook_deliveries'`,
    );
    const { rows: indexes } = await ctx.db.query(
      `SELECT indexrelname AS index, pg_relation_size(indexrelid) / 8192 AS pages, idx_scan, idx_tup_read
         FROM pg_stat_user_indexes WHERE relname = 'webhook_deliveries' ORDER BY indexrelname`,
    );
    process.stdout.write(
      `${JSON.stringify(
        {
          bench: 'webhook-claim-plan',
          backlog: BACKLOG,
          others: OTHERS,
          rounds: ROUNDS,
          loadavg_1m: Number(loadavg()[0]!.toFixed(2)),
          claim_ms_mean: Number((claimMs / ROUNDS).toFixed(2)),
          table: stats[0],
          indexes,
          plan_first: plans[0],
          plan_after_rounds: plans[1],
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    await closeContext(ctx);
    await db.drop();
    await vhost.drop();
  }
}

runMain(main, { exit: true });
