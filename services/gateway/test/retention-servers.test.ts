/** The retention sweeper on real PostgreSQL with the lease in Redis (support/retention-suite.ts). */
import { type Kv, openKv } from '@mailyard/platform';
import { useMigratedDatabase } from '@mailyard/testkit/migrated-database';
import { REDIS_URL, uniqueName } from '@mailyard/testkit/servers';
import { retentionSuite } from './support/retention-suite';

const database = useMigratedDatabase();
let kv: Kv;
beforeAll(async () => {
  kv = await openKv({ REDIS_URL, REDIS_KEY_PREFIX: `${uniqueName('retention')}:` });
});
afterAll(async () => {
  await kv?.close();
});

retentionSuite(() => ({ db: database.db, kv: () => kv }));
