/**
 * The built dashboard (dist/ui, services/gateway/dashboard/build.mjs), read into memory once:
 * every file with its gzip and brotli forms and its content type. Found beside the bundle
 * (dist/bin/gateway.js -> dist/ui; /app/dist/ui in the image) or, running from source, in the
 * repository's dist/ui. Missing (never built): `undefined`, and /ui and /docs say to run
 * `pnpm build`.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { Coding } from './encoding';

export interface Asset {
  type: string;
  forms: Record<Coding, Buffer | undefined>;
}

export interface DashboardAssets {
  /** By name under dist/ui (`index.html`, `docs.html`, `assets/main-XXXX.js`, ...). */
  files: Map<string, Asset>;
  manifest: { app: { js: string; css: string }; docs: { js: string; css: string } };
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

export const DASHBOARD_DIR_CANDIDATES = [
  join(__dirname, '..', 'ui'),
  join(__dirname, '..', '..', '..', '..', 'dist', 'ui'),
];

export function loadDashboardAssets(
  dirs: readonly string[] = DASHBOARD_DIR_CANDIDATES,
): DashboardAssets | undefined {
  const dir = dirs.find((d) => existsSync(join(d, 'manifest.json')));
  if (!dir) return undefined;
  const files = new Map<string, Asset>();
  const visit = (sub: string) => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const name = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) visit(name);
      else if (!name.endsWith('.gz') && !name.endsWith('.br') && TYPES[extname(name)]) {
        const read = (suffix: string) => {
          const p = join(dir, name + suffix);
          return existsSync(p) ? readFileSync(p) : undefined;
        };
        files.set(name, {
          type: TYPES[extname(name)]!,
          forms: { identity: read(''), gzip: read('.gz'), br: read('.br') },
        });
      }
    }
  };
  visit('');
  const manifest = JSON.parse(
    readFileSync(join(dir, 'manifest.json'), 'utf8'),
  ) as DashboardAssets['manifest'];
  return { files, manifest };
}
