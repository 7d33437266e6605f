/** The retention sweeper on the embedded defaults: PGlite and the in-process lease (support/retention-suite.ts). */
import { type Db, type Kv, createMemoryKv, migrate, openDatabase } from '@mailyard/platform';
import { retentionSuite } from './support/retention-suite';

let db: Db;
const kv: Kv = createMemoryKv();
beforeAll(async () => {
  db = await openDatabase({ DATABASE_URL: undefined, DATA_DIR: 'memory://', DB_POOL_SIZE: 1 });
  await migrate(db);
});
afterAll(async () => {
  await db?.close();
});

retentionSuite(() => ({ db: () => db, kv: () => kv }));
