import { spawnSync } from 'node:child_process';
// `node scripts/run-dist.mjs <name> [args...]`: runs the compiled dist/bin/<name>.js in THIS
// process (no launcher and worker pair, no TypeScript compiler at run time), after building it
// with deploy/build-dist.mjs when it is missing or older than any source it is built from.
// `pnpm start` runs the all-in-one `mailyard`; each service's `pnpm start` its own main.
// Plain JavaScript on purpose: it must run before anything is compiled.
import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [name, ...args] = process.argv.slice(2);
if (!name || !/^[\w-]+$/.test(name)) {
  process.stderr.write('usage: node scripts/run-dist.mjs <mailyard|gateway|send|...> [args...]\n');
  process.exit(2);
}
const bundle = join(root, 'dist', 'bin', `${name}.js`);

/** Newest modification time (ms) of the files the bundles are built from. */
function newestSource() {
  let newest = 0;
  const visit = (path) => {
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) {
      for (const entry of readdirSync(path)) if (entry !== 'node_modules') visit(join(path, entry));
    } else if (!path.endsWith('.test.ts') && st.mtimeMs > newest) newest = st.mtimeMs;
  };
  for (const group of ['libs', 'services'])
    for (const pkg of readdirSync(join(root, group))) visit(join(root, group, pkg, 'src'));
  for (const file of readdirSync(join(root, 'scripts'))) visit(join(root, 'scripts', file));
  visit(join(root, 'services', 'gateway', 'dashboard'));
  for (const file of ['deploy/build-dist.mjs', 'package.json', 'pnpm-lock.yaml']) visit(join(root, file));
  return newest;
}

const built = statSync(bundle, { throwIfNoEntry: false });
const ui = statSync(join(root, 'dist', 'ui', 'manifest.json'), { throwIfNoEntry: false });
if (!built || !ui || Math.min(built.mtimeMs, ui.mtimeMs) < newestSource()) {
  process.stderr.write(
    `${built ? 'sources changed since the last build' : `no ${relative(root, bundle)} yet`}: building (pnpm build)\n`,
  );
  const r = spawnSync(process.execPath, [join(root, 'deploy', 'build-dist.mjs')], {
    cwd: root,
    stdio: 'inherit',
  });
  if (r.status !== 0) process.exit(r.status ?? 1);
  if (!statSync(bundle, { throwIfNoEntry: false })) {
    process.stderr.write(`deploy/build-dist.mjs builds no ${relative(root, bundle)}\n`);
    process.exit(2);
  }
}

// The bundle sees itself as the program: process.argv[1] is its path, its arguments follow.
process.argv = [process.argv[0], bundle, ...args];
process.setSourceMapsEnabled(true);
createRequire(import.meta.url)(bundle);
