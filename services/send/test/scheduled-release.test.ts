/**
 * The release loop (scheduled-release.ts) on real PostgreSQL with a shared kv: of two loops, one
 * holds the lease and releases a due send once; when it stops (giving the lease back), the other
 * takes over and releases what falls due next. A send not yet due stays held.
 */
import { ulid } from '@mailyard/contracts';
import { type Db, createLogger, createMemoryKv } from '@mailyard/platform';
import { createTenant, scheduledSends, sends } from '@mailyard/store';
import { eventually } from '@mailyard/testkit/eventually';
import { bareSendRow } from '@mailyard/testkit/fixtures';
import { useMigratedDatabase } from '@mailyard/testkit/migrated-database';
import { type ScheduledRelease, startScheduledRelease } from '../src/scheduled-release';

const database = useMigratedDatabase();
let db: Db;
let tenantId: string;

beforeAll(async () => {
  db = database.db();
  tenantId = (await createTenant(db, { name: 'release', tier: 'standard' })).id;
});

async function hold(sendAt: Date): Promise<string> {
  const refId = ulid();
  await db.transaction(async (tx) => {
    await sends.insertAccepted(
      tx,
      bareSendRow(refId, tenantId),
      [
        {
          copyId: `${refId}.1`,
          recipient: 'a@example.com',
          recipientDomain: 'example.com',
          recipientType: 'to',
        },
      ],
      [],
    );
    await scheduledSends.hold(tx, tenantId, refId, sendAt, []);
  });
  return refId;
}

const status = async (refId: string) =>
  (await db.query<{ status: string }>('SELECT status FROM email_logs WHERE ref_id = $1', [refId])).rows[0]
    ?.status;

it('one loop of two releases; the other takes over when it stops', async () => {
  const kv = createMemoryKv();
  const logger = createLogger('release-test', 'error');
  const released = { a: 0, b: 0 };
  const a: ScheduledRelease = startScheduledRelease({
    db,
    kv,
    logger,
    pollMs: 100,
    afterRelease: () => released.a++,
  });
  const b: ScheduledRelease = startScheduledRelease({
    db,
    kv,
    logger,
    pollMs: 100,
    afterRelease: () => released.b++,
  });
  try {
    const first = await hold(new Date(Date.now() + 300));
    const notYet = await hold(new Date(Date.now() + 3_600_000));
    await eventually(async () => (await status(first)) === 'QUEUED', 'first send released');
    expect(released.a + released.b).toBe(1);
    const holder = released.a === 1 ? a : b;
    const other = holder === a ? 'b' : 'a';

    await holder.stop();
    const second = await hold(new Date(Date.now() + 300));
    await eventually(
      async () => (await status(second)) === 'QUEUED',
      'second send released by the other loop',
    );
    expect(released[other]).toBe(1);
    expect(await status(notYet)).toBe('SCHEDULED');
  } finally {
    await a.stop();
    await b.stop();
  }
});
