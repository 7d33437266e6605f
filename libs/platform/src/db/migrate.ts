import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from './types';

/**
 * Where the SQL files are: from this source file (libs/platform/src/db) and from a bundle in the
 * image (/app/dist/bin -> /app/migrations) that is `../../migrations`; a bundle built in the
 * repository (dist/bin, `pnpm build`) reads the repository's libs/platform/migrations.
 */
const besideSource = join(__dirname, '..', '..', 'migrations');
const inRepository = join(__dirname, '..', '..', 'libs', 'platform', 'migrations');
export const MIGRATIONS_DIR =
  !existsSync(besideSource) && existsSync(inRepository) ? inRepository : besideSource;

// Any constant shared by every migrator; serialises concurrent starts of several services.
const MIGRATION_LOCK = 7_312_001;

export interface Migration {
  version: string;
  sql: string;
}

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: f.replace(/\.sql$/, ''), sql: readFileSync(join(dir, f), 'utf8') }));
}

/** Applies pending migrations in order, each in its own transaction; returns the versions applied. */
export async function migrate(db: Db, migrations = readMigrations()): Promise<string[]> {
  const applied: string[] = [];
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set(
      (await tx.query<{ version: string }>('SELECT version FROM schema_migrations')).rows.map(
        (r) => r.version,
      ),
    );
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      for (const statement of splitStatements(m.sql)) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [m.version]);
      applied.push(m.version);
    }
  });
  return applied;
}

/** Splits a migration file on `;` at line ends (our migrations hold no procedural bodies). */
export function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*$/m)
    .map((s) => s.replace(/^\s*--.*$/gm, '').trim())
    .filter(Boolean);
}
