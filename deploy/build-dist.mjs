// Compiles every service (and the migration runner) into one CommonJS file each, under
// dist/bin/, with esbuild: workspace TypeScript and npm dependencies bundled in, so the runtime
// image needs no node_modules except PGlite (kept external: it loads its WASM from its own
// package directory; only embedded mode uses it). Migrations are read from dist/bin/../../migrations,
// i.e. <root>/migrations, as libs/platform/src/db/migrate.ts resolves them.
import { build } from 'esbuild';

const entries = {
  gateway: 'services/gateway/src/main.ts',
  send: 'services/send/src/main.ts',
  tracking: 'services/tracking/src/main.ts',
  'webhook-dispatcher': 'services/webhook-dispatcher/src/main.ts',
  'inbound-smtp': 'services/inbound-smtp/src/main.ts',
  'imap-backfill': 'services/imap-backfill/src/main.ts',
  migrate: 'scripts/migrate.ts',
  cli: 'scripts/cli.ts',
};

await build({
  entryPoints: entries,
  outdir: 'dist/bin',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  minify: false,
  external: ['@electric-sql/pglite', 'pg-native'],
  logLevel: 'warning',
});
console.log(`built ${Object.keys(entries).join(', ')} into dist/bin`);
