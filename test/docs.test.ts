/**
 * The repository documents itself, and its docs stay true to the code:
 * - every route the gateway, the tracking service and the ops port serve (read from the express
 *   apps themselves, so a new route is found without editing this file) has a section in
 *   docs/api/ whose heading names it (`METHOD /path`, parameters in braces), and the section says
 *   what the request, the response and the errors are and shows an example;
 * - every environment variable a settings schema declares, or the code reads from process.env,
 *   is in docs/configuration.md;
 * - every relative link of the tracked Markdown files leads to a file that exists, and an
 *   `#anchor` to a heading of it;
 * - nothing refers to files outside the repository (a clone is complete).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { buildGatewayApp } from '@mailyard/gateway';
import {
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  createOpsApp,
  linkTokenKey,
  openContext,
} from '@mailyard/platform';
import { endpointKeys } from '@mailyard/testkit/app-routes';
import { createSharedStores } from '@mailyard/testkit/stores';
import { buildTrackingApp } from '@mailyard/tracking';

const ROOT = resolve(__dirname, '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** Tracked files (what a clone has), paths relative to the repository root. */
const tracked = (): string[] =>
  execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((f) => f && !f.split('/').includes('node_modules') && existsSync(join(ROOT, f)));

/** The lines of a Markdown text outside fenced code blocks, with their numbers. */
function proseLines(md: string): Array<{ n: number; line: string }> {
  const out: Array<{ n: number; line: string }> = [];
  let fenced = false;
  md.split('\n').forEach((line, i) => {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced) out.push({ n: i + 1, line });
  });
  return out;
}

/** A route key with its parameters as `{}`: `/v1/mailer/:mailer_id` and `/v1/mailer/{id}` compare equal. */
const routeKey = (method: string, path: string) =>
  `${method} ${path.replace(/:[A-Za-z_][A-Za-z0-9_]*/g, '{}').replace(/\{[^}]*\}/g, '{}')}`;

interface Section {
  file: string;
  heading: string;
  body: string;
}

/** Sections of docs/api whose heading names routes in code spans, by route key. */
function documentedRoutes(): Map<string, Section> {
  const out = new Map<string, Section>();
  for (const file of tracked().filter((f) => /^docs\/api\/.*\.md$/.test(f))) {
    const lines = proseLines(read(file));
    const all = read(file).split('\n');
    lines.forEach(({ n, line }, idx) => {
      const h = /^(#{1,6})\s+(.*)$/.exec(line);
      if (!h) return;
      const level = h[1]!.length;
      const next = lines.slice(idx + 1).find((l) => {
        const m = /^(#{1,6})\s/.exec(l.line);
        return m !== null && m[1]!.length <= level;
      });
      const body = all.slice(n, next ? next.n - 1 : all.length).join('\n');
      for (const m of h[2]!.matchAll(/`(GET|POST|PUT|DELETE|PATCH|HEAD) (\/[^`\s]*)`/g))
        out.set(routeKey(m[1]!, m[2]!), { file, heading: h[2]!, body });
    });
  }
  return out;
}

let ctx: ServiceContext | undefined;
const served: Array<{ app: string; key: string; route: string }> = [];

beforeAll(async () => {
  const stores = await createSharedStores('embedded');
  const logger = createLogger('docs-test', 'error');
  ctx = await openContext(configFrom({ LOG_LEVEL: 'error', ...stores.env }), logger);
  const apps = {
    gateway: buildGatewayApp(ctx),
    tracking: buildTrackingApp(
      {
        db: ctx.db,
        logger,
        geo: () => ({ country: '', city: '', region: '', time_zone: '' }),
        key: linkTokenKey(ctx.sealer),
        afterCommit: () => {},
      },
      { trustProxy: false },
    ),
    ops: createOpsApp({ logger }),
  };
  for (const [app, express] of Object.entries(apps))
    for (const route of endpointKeys(express)) {
      const [method, path] = route.split(' ') as [string, string];
      served.push({ app, route, key: routeKey(method, path) });
    }
});
afterAll(async () => {
  if (ctx) await closeContext(ctx);
});

describe('docs/api', () => {
  it('has a section for every route the gateway, the tracking service and the ops port serve', () => {
    expect(served.filter((r) => r.app === 'gateway').length).toBeGreaterThan(50);
    expect(served.filter((r) => r.app === 'tracking').map((r) => r.route)).toEqual(
      expect.arrayContaining(['GET /o/:token', 'POST /u/:token']),
    );
    expect(served.map((r) => r.route)).toContain('GET /metrics');
    const documented = documentedRoutes();
    const missing = served.filter((r) => !documented.has(r.key)).map((r) => `${r.app}: ${r.route}`);
    expect(missing).toEqual([]);
  });

  it('gives each route its request, response, errors and an example', () => {
    const documented = documentedRoutes();
    const incomplete = [...new Set(served.map((r) => r.key))].flatMap((key) => {
      const s = documented.get(key);
      if (!s) return [];
      const lacks = ['**Request**', '**Response**', '**Errors**', '**Example**'].filter(
        (label) => !s.body.includes(label),
      );
      if (!s.body.includes('```')) lacks.push('a code block');
      return lacks.length > 0 ? [`${s.file} "${s.heading}" lacks ${lacks.join(', ')}`] : [];
    });
    expect(incomplete).toEqual([]);
  });

  it('documents no route that is not served', () => {
    const keys = new Set(served.map((r) => r.key));
    const stale = [...documentedRoutes()]
      .filter(([key]) => !keys.has(key))
      .map(([key, s]) => `${s.file}: ${key}`);
    expect(stale).toEqual([]);
  });
});

describe('docs/configuration.md', () => {
  it('lists every environment variable the settings schemas declare or the code reads', () => {
    const sources = tracked().filter(
      (f) => /^(libs|services)\/[^/]+\/src\//.test(f) && f.endsWith('.ts') && !f.endsWith('.test.ts'),
    );
    const names = new Set<string>();
    for (const file of sources) {
      const text = read(file);
      if (file.endsWith('/settings.ts') || file.startsWith('libs/platform/src/config/'))
        for (const m of text.matchAll(/^\s+([A-Z][A-Z0-9_]{2,}):\s/gm)) names.add(m[1]!);
      for (const m of text.matchAll(/process\.env\.([A-Z][A-Z0-9_]+)/g)) names.add(m[1]!);
    }
    expect(names.size).toBeGreaterThan(100);
    expect(names).toContain('SEND_MAX_ATTEMPTS');
    const doc = read('docs/configuration.md');
    const undocumented = [...names].filter((n) => !doc.includes(`\`${n}\``));
    expect(undocumented).toEqual([]);
  });
});

/** GitHub's anchor of a heading: lowercased, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown file (repeated headings get -1, -2, ... as on GitHub). */
function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { line } of proseLines(md)) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const base = slug(h[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

describe('Markdown links', () => {
  it('every relative link leads to a file of the repository, and every anchor to a heading', () => {
    const broken: string[] = [];
    for (const file of tracked().filter((f) => f.endsWith('.md'))) {
      const md = read(file);
      for (const { n, line } of proseLines(md)) {
        const prose = line.replace(/`[^`]*`/g, '');
        for (const m of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
          const target = m[1]!;
          if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, ...
          const [path, anchor] = target.split('#') as [string, string | undefined];
          const abs = path ? resolve(ROOT, dirname(file), path) : join(ROOT, file);
          const where = `${file}:${n} (${target})`;
          if (!abs.startsWith(ROOT) || !existsSync(abs)) {
            broken.push(`${where}: no such file`);
            continue;
          }
          if (anchor && abs.endsWith('.md') && !anchors(readFileSync(abs, 'utf8')).has(anchor))
            broken.push(`${where}: no heading #${anchor} in ${relative(ROOT, abs)}`);
          if (anchor && statSync(abs).isDirectory()) broken.push(`${where}: an anchor on a folder`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});

/** What only a checkout beside the repository has: the repository must not point there. */
const OUTSIDE = ['../shared', 'SPEC.md', 'DESIGN.md', 'SPEC "', 'SPEC events'];
const THIS_FILE = relative(ROOT, __filename);
/** A verbatim dated notebook: kept as written, old pointers and all. */
const NOTEBOOK = 'bench/history/';
const mentionsOutside = (files: string[]) =>
  files.flatMap((f) => {
    const text = read(f);
    return OUTSIDE.filter((s) => text.includes(s)).map((s) => `${f}: ${s}`);
  });

/**
 * Section pointers in prose and comments that lead nowhere: `README "<section>"` (the README is a
 * short quick start with no reference sections), and `<page>.md "<Heading>"` (from the root, or
 * beside the file) naming a page that does not exist or a heading (or the start of one) it lacks.
 */
const deadSectionPointers = (files: string[]) =>
  files.flatMap((f) => {
    const out: string[] = [];
    read(f)
      .split('\n')
      .forEach((line, i) => {
        for (const m of line.matchAll(/\bREADME(?:'s)?,? "([^"]+)"/g))
          out.push(`${f}:${i + 1}: README "${m[1]}"`);
        for (const m of line.matchAll(/([\w./-]*\w\.md),? "([^"]+)"/g)) {
          const [, page, heading] = m as unknown as [string, string, string];
          const path = [join(ROOT, page), resolve(ROOT, dirname(f), page)].find(existsSync);
          const named = slug(heading); // the whole heading, or its start ("Limits" for "Limits (...)")
          const ok =
            path !== undefined &&
            [...anchors(readFileSync(path, 'utf8'))].some((a) => a === named || a.startsWith(`${named}-`));
          if (!ok) out.push(`${f}:${i + 1}: ${page} "${heading}"`);
        }
      });
    return out;
  });

describe('no reference outside the repository', () => {
  it('in the README, docs/ and bench/', () => {
    const files = tracked().filter((f) => f === 'README.md' || /^(docs|bench)\//.test(f));
    expect(files.length).toBeGreaterThan(30);
    expect(mentionsOutside(files)).toEqual([]);
  });

  const sources = () => tracked().filter((f) => f !== THIS_FILE && !f.startsWith(NOTEBOOK));

  it('in any tracked file', () => {
    expect(mentionsOutside(sources())).toEqual([]);
  });

  it('no pointer to a README section, and every docs page section named exists', () => {
    expect(deadSectionPointers(sources())).toEqual([]);
  });
});
