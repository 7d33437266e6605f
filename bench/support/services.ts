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
import { REPO_ROOT, type Spawned, spawnTs } from '@mailyard/testkit/process';

export type ServiceName =
  | 'gateway'
  | 'send'
  | 'tracking'
  | 'webhook-dispatcher'
  | 'inbound-smtp'
  | 'imap-backfill';

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
