/** `pnpm migrate`: applies pending SQL migrations to DATABASE_URL (or the embedded PGlite). */
import { ConfigError, loadConfig, migrate, openDatabase } from '@mailyard/platform';

async function main(): Promise<void> {
  const config = loadConfig();
  const db = await openDatabase(config);
  try {
    const applied = await migrate(db);
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
  } finally {
    await db.close();
  }
}

main().catch((err) => {
  process.stderr.write(
    `${err instanceof ConfigError ? err.message : `migration failed: ${(err as Error).message}`}\n`,
  );
  process.exit(1);
});
