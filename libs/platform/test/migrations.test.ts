import { type TestDatabase, createTestDatabase } from '@mailyard/testkit/servers';
import { migrate, openDatabase, readMigrations } from '../src/db';

const EXPECTED_TABLES = ['api_keys', 'outbox', 'schema_migrations', 'templates', 'tenants'];

async function tables(db: Awaited<ReturnType<typeof openDatabase>>): Promise<string[]> {
  const { rows } = await db.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
  );
  return rows.map((r) => r.table_name);
}

describe('migrations', () => {
  let pgDb: TestDatabase;
  beforeAll(async () => {
    pgDb = await createTestDatabase();
  });
  afterAll(async () => {
    await pgDb?.drop();
  });

  it('apply in order on a fresh PostgreSQL database, once', async () => {
    const db = await openDatabase({ DATABASE_URL: pgDb.url, DATA_DIR: '', DB_POOL_SIZE: 2 });
    try {
      const all = readMigrations().map((m) => m.version);
      expect(all[0]).toBe('0001_foundation');
      expect(await migrate(db)).toEqual(all);
      expect(await migrate(db)).toEqual([]);
      expect(await tables(db)).toEqual(expect.arrayContaining(EXPECTED_TABLES));
    } finally {
      await db.close();
    }
  });

  it('serialise concurrent migrators (several services starting at once)', async () => {
    const fresh = await createTestDatabase();
    const dbs = await Promise.all(
      [1, 2, 3].map(() => openDatabase({ DATABASE_URL: fresh.url, DATA_DIR: '', DB_POOL_SIZE: 2 })),
    );
    try {
      const results = await Promise.all(dbs.map((db) => migrate(db)));
      expect(results.flat().sort()).toEqual(readMigrations().map((m) => m.version));
    } finally {
      await Promise.all(dbs.map((db) => db.close()));
      await fresh.drop();
    }
  });

  it('produce the same schema on PGlite as on PostgreSQL', async () => {
    const lite = await openDatabase({ DATABASE_URL: undefined, DATA_DIR: 'memory://', DB_POOL_SIZE: 1 });
    const pg = await openDatabase({ DATABASE_URL: pgDb.url, DATA_DIR: '', DB_POOL_SIZE: 2 });
    try {
      // Each side migrated here: this test must not depend on another one having run first.
      await migrate(lite);
      await migrate(pg);
      expect(await tables(lite)).toEqual(expect.arrayContaining(EXPECTED_TABLES));
      const columns = async (db: typeof lite) =>
        (
          await db.query<{ c: string }>(
            `SELECT table_name || '.' || column_name || ':' || data_type AS c FROM information_schema.columns
              WHERE table_schema = 'public' ORDER BY table_name, column_name`,
          )
        ).rows.map((r) => r.c);
      expect(await columns(lite)).toEqual(await columns(pg));
    } finally {
      await lite.close();
      await pg.close();
    }
  });
});
