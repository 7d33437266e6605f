// `pnpm build` (and the image's build stage): compiles every service, the all-in-one launcher
// and the migration runner and CLI into one CommonJS file each, under dist/bin/, with esbuild:
// workspace TypeScript and npm dependencies bundled in, so the runtime image needs no
// node_modules except PGlite (kept external: it loads its WASM from its own package directory;
// only embedded mode uses it). Migrations are read from dist/bin/../../migrations, i.e.
// <root>/migrations in the image, or libs/platform/migrations in the repository, as
// libs/platform/src/db/migrate.ts resolves them. scripts/run-dist.mjs (`pnpm start`) runs this
// first when dist/bin is missing or older than the sources.
//
// It also builds the dashboard (GET /ui) and the /docs page into dist/ui/
// (services/gateway/dashboard/build.mjs: content-hashed, pre-compressed browser assets).
//
// Each file is written aside and renamed into place, so a process starting from dist/bin while
// another one rebuilds it never loads half a file.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildDashboard } from '../services/gateway/dashboard/build.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const entries = {
  mailyard: 'scripts/start.ts',
  gateway: 'services/gateway/src/main.ts',
  send: 'services/send/src/main.ts',
  tracking: 'services/tracking/src/main.ts',
  'webhook-dispatcher': 'services/webhook-dispatcher/src/main.ts',
  'imap-backfill': 'services/imap-backfill/src/main.ts',
  'inbound-smtp': 'services/inbound-smtp/src/main.ts',
  submission: 'services/submission/src/main.ts',
  migrate: 'scripts/migrate.ts',
  cli: 'scripts/cli.ts',
};

const outdir = join(root, 'dist', 'bin');
const result = await build({
  absWorkingDir: root,
  entryPoints: entries,
  outdir,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  sourcesContent: false,
  minifyWhitespace: true,
  external: ['@electric-sql/pglite', 'pg-native'],
  logLevel: 'warning',
  write: false,
});
mkdirSync(outdir, { recursive: true });
for (const file of result.outputFiles) {
  const aside = `${file.path}.${process.pid}.tmp`;
  writeFileSync(aside, file.contents);
  renameSync(aside, file.path);
}
console.log(`built ${Object.keys(entries).join(', ')} into ${relative(root, outdir)}`);
const ui = await buildDashboard(join(root, 'dist', 'ui'));
console.log(`built the dashboard (${ui.app.js}) and /docs (${ui.docs.js}) into dist/ui`);
