// Builds the dashboard (GET /ui) and the /docs page into dist/ui/ (docs/dashboard.md "Build"):
// esbuild bundles src/main.tsx (Preact, uPlot, @mailyard/client's browser entry) and docs/docs.ts
// (Swagger UI from swagger-ui-dist) into content-hashed files under dist/ui/assets/, each also
// written gzip- and brotli-compressed (.gz, .br) for the gateway to serve as the browser accepts;
// index.html and docs.html reference them (no inline script or style: the CSP forbids both);
// manifest.json names the hashed files and their sizes. Written aside and swapped into place, so
// a gateway starting during a rebuild never reads half a directory.
// Run by deploy/build-dist.mjs (`pnpm build`); `node services/gateway/dashboard/build.mjs` alone.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { constants, brotliCompressSync, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '..', '..', '..');

const page = (title, css, js, body) =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${title}</title>
<link rel="stylesheet" href="/ui/assets/${css}">
<script type="module" src="/ui/assets/${js}"></script>
</head>
<body>
${body}
</body>
</html>
`;

function compressed(path, bytes) {
  writeFileSync(path, bytes);
  writeFileSync(`${path}.gz`, gzipSync(bytes, { level: 9 }));
  const br = brotliCompressSync(bytes, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
  });
  writeFileSync(`${path}.br`, br);
  return { bytes: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length, brotli: br.length };
}

/** Builds into `<outDir>` (default <repo>/dist/ui); returns the manifest. */
export async function buildDashboard(outDir = join(repoRoot, 'dist', 'ui')) {
  const aside = `${outDir}.${process.pid}.tmp`;
  rmSync(aside, { recursive: true, force: true });
  const assets = join(aside, 'assets');
  mkdirSync(assets, { recursive: true });
  const result = await build({
    absWorkingDir: here,
    entryPoints: { main: 'src/main.tsx', docs: 'docs/docs.ts' },
    outdir: assets,
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome109', 'firefox115', 'safari15.6'],
    minify: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: join(here, 'tsconfig.json'),
    legalComments: 'linked',
    define: { 'process.env.NODE_ENV': '"production"' },
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  const files = {};
  for (const f of result.outputFiles) {
    const name = basename(f.path);
    if (name.endsWith('.txt')) {
      writeFileSync(f.path, f.contents);
      files[name] = { bytes: f.contents.length };
    } else files[name] = compressed(f.path, f.contents);
  }
  const outputOf = (entry, ext) => {
    const [path, out] =
      Object.entries(result.metafile.outputs).find(([, o]) => o.entryPoint?.endsWith(entry)) ?? [];
    if (!path) return undefined;
    if (ext === '.js') return basename(path);
    return out.cssBundle ? basename(out.cssBundle) : undefined;
  };
  const manifest = {
    app: { js: outputOf('src/main.tsx', '.js'), css: outputOf('src/main.tsx', '.css') },
    docs: { js: outputOf('docs/docs.ts', '.js'), css: outputOf('docs/docs.ts', '.css') },
    files,
  };
  if (!manifest.app.js || !manifest.app.css || !manifest.docs.js || !manifest.docs.css)
    throw new Error(`dashboard build: missing an entry output ${JSON.stringify(manifest)}`);
  compressed(
    join(aside, 'index.html'),
    Buffer.from(
      page(
        'Mailyard',
        manifest.app.css,
        manifest.app.js,
        '<div id="app"></div>\n<noscript>The Mailyard dashboard needs JavaScript.</noscript>',
      ),
    ),
  );
  compressed(
    join(aside, 'docs.html'),
    Buffer.from(
      page(
        'Mailyard API',
        manifest.docs.css,
        manifest.docs.js,
        '<div class="docs-top"><a href="/ui">Dashboard</a> · <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1)</div>\n<div id="swagger-ui"></div>\n<noscript>The API reference needs JavaScript; the document itself is at /openapi.json.</noscript>',
      ),
    ),
  );
  writeFileSync(join(aside, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const old = `${outDir}.${process.pid}.old`;
  mkdirSync(dirname(outDir), { recursive: true });
  if (existsSync(outDir)) renameSync(outDir, old);
  renameSync(aside, outDir);
  rmSync(old, { recursive: true, force: true });
  return manifest;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const m = await buildDashboard();
  console.log(
    `built the dashboard and /docs into ${relative(process.cwd(), join(repoRoot, 'dist', 'ui'))}: ${m.app.js}, ${m.docs.js}`,
  );
}
