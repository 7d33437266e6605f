import { join, resolve } from 'node:path';
import type { Config } from '../config/env';
import { openPglite } from './pglite';
import { openPostgres } from './postgres';
import type { Db } from './types';

export * from './types';
export { migrate, readMigrations, splitStatements, MIGRATIONS_DIR } from './migrate';

/** PostgreSQL when DATABASE_URL is set, else PGlite under DATA_DIR/pg. */
export async function openDatabase(
  config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR' | 'DB_POOL_SIZE'>,
): Promise<Db> {
  if (config.DATABASE_URL) return openPostgres(config.DATABASE_URL, config.DB_POOL_SIZE);
  const dir = config.DATA_DIR.startsWith('memory://')
    ? config.DATA_DIR
    : resolve(join(config.DATA_DIR, 'pg'));
  return openPglite(dir);
}
