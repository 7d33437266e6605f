/**
 * A fresh, migrated PostgreSQL database for one test file on the shared server (servers.ts),
 * opened through the platform's own pool as the services open theirs; dropped after the file.
 * Call at the top level of the file; `db()` is valid inside tests.
 */
import { type Db, configFrom, migrate, openDatabase } from '@mailyard/platform';
import { type TestDatabase, createTestDatabase } from './servers';

export function useMigratedDatabase(): { db: () => Db; url: () => string } {
  let tdb: TestDatabase | undefined;
  let db: Db | undefined;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await openDatabase(configFrom({ DATABASE_URL: tdb.url }));
    await migrate(db);
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });
  return {
    db: () => {
      if (!db) throw new Error('useMigratedDatabase: the database opens in beforeAll');
      return db;
    },
    url: () => tdb!.url,
  };
}
