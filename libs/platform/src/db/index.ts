import { join, resolve } from 'node:path';
import type { Config } from '../config/env';
import { lockDataDir } from './data-dir-lock';
import type { Db } from './types';

export * from './types';
export { migrate, readMigrations, splitStatements, MIGRATIONS_DIR } from './migrate';
export { DataDirLockedError, LOCK_FILE, lockDataDir } from './data-dir-lock';

/**
 * PostgreSQL when DATABASE_URL is set, else PGlite under DATA_DIR/pg, opened only after taking
 * the exclusive lock on DATA_DIR (DataDirLockedError if another process holds it); closing the
 * database releases the lock. Each driver is loaded only when it is the one configured.
 */
export async function openDatabase(
  config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR' | 'DB_POOL_SIZE'>,
): Promise<Db> {
  if (config.DATABASE_URL) {
    const { openPostgres } = await import('./postgres');
    return openPostgres(config.DATABASE_URL, config.DB_POOL_SIZE);
  }
  const { openPglite } = await import('./pglite');
  if (config.DATA_DIR.startsWith('memory://')) return openPglite(config.DATA_DIR);
  const lock = lockDataDir(config.DATA_DIR);
  let db: Db;
  try {
    db = await openPglite(resolve(join(config.DATA_DIR, 'pg')));
  } catch (err) {
    lock.release();
    throw err;
  }
  return {
    ...db,
    async close() {
      try {
        await db.close();
      } finally {
        lock.release();
      }
    },
  };
}
