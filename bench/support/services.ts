/**
 * How the benchmarks start the services: in the form production runs them unless told otherwise.
 *
 * - `BENCH_RUNTIME=dist` (default): the esbuild bundle `dist/bin/<name>.js` that
 *   deploy/build-dist.mjs writes for the image, run as the image runs it (`node
 *   --enable-source-maps`); built once per benchmark run by `prepareServices()`.
 * - `BENCH_RUNTIME=tsx`: the TypeScript sources through tsx (no build step; for quick edits).
 *
 * `BENCH_SERVICES_ROOT=<checkout>` takes the services from another checkout (its dependencies
 * installed), so a baseline and a change are measured by the same benchmark in one sitting.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { configFrom, migrate, openDatabase, readMigrations } from '@mailyard/platform';
import { REPO_ROOT, type Spawned, spawnTs } from '@mailyard/testkit/process';

export type ServiceName =
  | 'gateway'
  | 'send'
  | 'tracking'
  | 'webhook-dispatcher'
  | 'inbound-smtp'
  | 'imap-backfill'
  | 'submission';

export const SERVICES_ROOT = process.env.BENCH_SERVICES_ROOT ?? REPO_ROOT;
export const RUNTIME: 'dist' | 'tsx' = process.env.BENCH_RUNTIME === 'tsx' ? 'tsx' : 'dist';

/** What the report says about where the services came from and how they ran. */
export function servicesForm(): { services_root: string; runtime: string } {
  return {
    services_root: SERVICES_ROOT === REPO_ROOT ? 'this checkout' : SERVICES_ROOT,
    runtime:
      RUNTIME === 'dist'
        ? 'dist/bin bundle, node --enable-source-maps (as in the image)'
        : 'sources through tsx',
  };
}

/**
 * Gives the database at `url` the schema the services measured expect: SERVICES_ROOT's
 * migrations, applied. This checkout's migrations that SERVICES_ROOT does not have are recorded
 * as applied WITHOUT running them, so that the harness's own context (openContext migrates with
 * this checkout's migrations) leaves the baseline's schema as it is: an A/B of a migration
 * (indexes, fillfactor) measures each side with its own schema. Call before openContext.
 */
export async function migrateAsServices(url: string): Promise<string[]> {
  const db = await openDatabase(configFrom({ DATABASE_URL: url }));
  try {
    const theirs = readMigrations(join(SERVICES_ROOT, 'libs', 'platform', 'migrations'));
    const applied = await migrate(db, theirs);
    const known = new Set(theirs.map((m) => m.version));
    const skipped = readMigrations()
      .map((m) => m.version)
      .filter((v) => !known.has(v));
    for (const v of skipped) {
      await db.query('INSERT INTO schema_migrations (version) VALUES ($1) ON CONFLICT DO NOTHING', [v]);
    }
    return applied;
  } finally {
    await db.close();
  }
}

let prepared = false;

/** Builds the bundles (`BENCH_RUNTIME=dist`) of SERVICES_ROOT, once per benchmark process. */
export function prepareServices(): void {
  if (RUNTIME !== 'dist' || prepared) return;
  const r = spawnSync(process.execPath, [join(SERVICES_ROOT, 'deploy', 'build-dist.mjs')], {
    cwd: SERVICES_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`building the services in ${SERVICES_ROOT} failed (${r.status})`);
  prepared = true;
}

/** The entry point and node options of one service in the chosen form. */
export function serviceEntry(name: ServiceName): { script: string; nodeArgs: string[] } {
  if (RUNTIME === 'tsx')
    return { script: join(SERVICES_ROOT, 'services', name, 'src', 'main.ts'), nodeArgs: [] };
  prepareServices();
  return { script: join(SERVICES_ROOT, 'dist', 'bin', `${name}.js`), nodeArgs: ['--enable-source-maps'] };
}

/** Starts one service in its own node process (`nodeArgs`: e.g. `--cpu-prof`). */
export function spawnService(
  name: ServiceName,
  env: Record<string, string | undefined>,
  nodeArgs: string[] = [],
): Spawned {
  const entry = serviceEntry(name);
  return spawnTs(entry.script, env, [], [...nodeArgs, ...entry.nodeArgs]);
}
