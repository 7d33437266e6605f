/**
 * Crash safety: the send service runs as its own process; it is SIGKILLed in the middle of a
 * batch and started again. Every accepted copy must still end with exactly one terminal event.
 * SMTP cannot be made exactly-once (a message the server accepted just before the kill is sent
 * again after the restart), so the duplicates the receiver got are counted and reported.
 */
import { RoutingKey } from '@mailyard/contracts';
import { type ServiceContext, closeContext, configFrom, createLogger, openContext } from '@mailyard/platform';
import { eventually } from '@mailyard/testkit/eventually';
import { acceptSend, insertSmtpMailer, newTenant } from '@mailyard/testkit/fixtures';
import { startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { type Spawned, spawnTs } from '@mailyard/testkit/process';
import { type Stores, createStores } from '@mailyard/testkit/stores';

jest.setTimeout(240_000);

const COPIES_PER_SEND = 100;
const SENDS = 3;
const TOTAL = COPIES_PER_SEND * SENDS;

let stores: Stores;
let ctx: ServiceContext;

beforeAll(async () => {
  stores = await createStores();
  ctx = await openContext(
    configFrom({ LOG_LEVEL: 'error', ...stores.env }),
    createLogger('kill-test', 'error'),
  );
});

afterAll(async () => {
  await closeContext(ctx);
  await stores.drop();
});

function startService(): Spawned {
  return spawnTs('services/send/src/main.ts', {
    ...stores.env,
    LOG_LEVEL: 'warn',
    OUTBOX_POLL_MS: '50',
    SEND_POOL_CONNECTIONS: '4',
    SEND_RETRY_DELAYS: '1',
    MAILER_ALLOW_PRIVATE_HOSTS: '1',
  });
}

it('every copy ends in exactly one terminal event after a SIGKILL mid-batch and a restart', async () => {
  // A slowish server, so that the kill lands while deliveries are in flight.
  const receiver = await startSmtpReceiver({ dataDelayMs: 15 });
  const tenantId = await newTenant(ctx.db);
  const mailerId = await insertSmtpMailer(ctx.db, ctx.sealer, tenantId, {
    port: receiver.port,
    secure: 'None',
  });
  const copyIds: string[] = [];
  for (let s = 0; s < SENDS; s++) {
    const to = Array.from({ length: COPIES_PER_SEND }, (_, i) => ({ email: `r${s}-${i}@example.com` }));
    const accepted = await acceptSend(ctx.db, tenantId, {
      from: { email: 'sender@example.com' },
      to,
      mailer_id: mailerId,
      subject: 'Hello {{n}}',
      content: [{ type: 'text/plain', value: 'Copy {{n}}' }],
      substitutions: Object.fromEntries(to.map((r, i) => [r.email, { n: `${s}-${i}` }])),
    });
    copyIds.push(...accepted.copyIds);
  }
  expect(copyIds).toHaveLength(TOTAL);

  let service = startService();
  try {
    await service.waitFor(/Mailyard send started/);
    await receiver.waitForMessages(Math.floor(TOTAL / 5), 120_000);
    service.child.kill('SIGKILL');
    const killed = await service.exited;
    expect(killed.signal).toBe('SIGKILL');
    const atKill = receiver.messages.length;
    const { rows: recordedAtKill } = await ctx.db.query<{ n: number }>(
      'SELECT count(DISTINCT copy_id)::int AS n FROM email_events WHERE tenant_id = $1',
      [tenantId],
    );
    expect(atKill).toBeLessThan(TOTAL);

    service = startService();
    await service.waitFor(/Mailyard send started/);
    await eventually(
      async () => {
        const { rows } = await ctx.db.query<{ n: number }>(
          'SELECT count(DISTINCT copy_id)::int AS n FROM email_events WHERE tenant_id = $1',
          [tenantId],
        );
        return rows[0]!.n >= TOTAL;
      },
      'every copy has an event',
      180_000,
    );

    const { rows: perCopy } = await ctx.db.query<{ copy_id: string; terminal: number; events: string[] }>(
      `SELECT copy_id,
              count(*) FILTER (WHERE event <> 'SMTP_ERROR' OR payload->'details'->>'retry_scheduled' = 'false')::int AS terminal,
              array_agg(event || ':' || attempt ORDER BY id) AS events
         FROM email_events WHERE tenant_id = $1 GROUP BY copy_id`,
      [tenantId],
    );
    expect(perCopy).toHaveLength(TOTAL);
    expect(perCopy.filter((c) => c.terminal !== 1)).toEqual([]);
    expect(new Set(perCopy.map((c) => c.copy_id))).toEqual(new Set(copyIds));
    const { rows: statuses } = await ctx.db.query<{ status: string; n: number }>(
      'SELECT status, count(*)::int AS n FROM email_logs WHERE tenant_id = $1 GROUP BY status',
      [tenantId],
    );
    expect(statuses).toEqual([{ status: 'MAIL_DELIVERED', n: TOTAL }]);
    // every event reached the bus too (the outbox drained)
    await eventually(async () => {
      const { rows } = await ctx.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM outbox WHERE sent_at IS NULL AND routing_key <> $1',
        [RoutingKey.mailerDeactivated],
      );
      return rows[0]!.n === 0;
    }, 'outbox drained');

    const ids = receiver.messages.map((m) => /^Message-ID: (.+)$/m.exec(m.raw.toString())?.[1]?.trim());
    const unique = new Set(ids);
    expect(unique.size).toBe(TOTAL);
    const duplicates = ids.length - unique.size;
    console.log(
      `kill/restart: ${TOTAL} copies; killed after the receiver had ${atKill} messages (${recordedAtKill[0]!.n} copies recorded); ` +
        `receiver got ${ids.length} messages for ${unique.size} copies => ${duplicates} duplicate deliveries`,
    );
  } finally {
    service.child.kill('SIGTERM');
    await service.exited;
    await receiver.close();
  }
});
