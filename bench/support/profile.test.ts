/**
 * The profile summary places bundled code by its original source: a small service tree (two
 * TypeScript files and a package) is bundled here with esbuild as deploy/build-dist.mjs bundles
 * the services (one whitespace-minified file and its .map), run under `--cpu-prof`, and its profile
 * summarized. Every frame of that profile points into dist/demo.js; the tables must name the
 * TypeScript files and the package instead.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildSync } from 'esbuild';
import { type ProfileSummary, readProfiles, summarize } from './profile';
import { sourceResolver } from './source-map';

const FILES: Record<string, string> = {
  'services/demo/src/work.ts': [
    "import leftpad from 'leftpad';",
    '',
    '/** Spins until this process has used `ms` of CPU. */',
    'export function burn(ms: number): number {',
    '  const until = process.cpuUsage().user + ms * 1000;',
    '  let n = 0;',
    '  while (process.cpuUsage().user < until) for (let i = 0; i < 1000; i++) n += leftpad(String(i), 12).length;',
    '  return n;',
    '}',
  ].join('\n'),
  'services/demo/src/main.ts': [
    "import { burn } from './work';",
    '',
    'const spin = (ms: number): number => burn(ms);',
    'console.log(spin(Number(process.argv[2])));',
  ].join('\n'),
  'node_modules/leftpad/package.json': '{ "name": "leftpad", "main": "index.js" }',
  'node_modules/leftpad/index.js': [
    '// a package of the tree',
    'module.exports = function leftpad(s, n) {',
    '  let out = s;',
    "  for (let i = 0; i < 50; i++) out = ' ' + out;",
    '  return out.slice(-n);',
    '};',
  ].join('\n'),
};

let root: string;
let bundle: string;
let summary: ProfileSummary;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'profile-map-'));
  for (const [path, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  buildSync({
    absWorkingDir: root,
    entryPoints: { demo: 'services/demo/src/main.ts' },
    outdir: join(root, 'dist'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    sourcemap: true,
    sourcesContent: false,
    minifyWhitespace: true,
    logLevel: 'silent',
  });
  bundle = join(root, 'dist', 'demo.js');
  const profDir = join(root, 'prof');
  // 300 ms of CPU in burn() and leftpad(), sampled every 0.2 ms.
  execFileSync(process.execPath, [
    '--enable-source-maps',
    '--cpu-prof',
    `--cpu-prof-dir=${profDir}`,
    '--cpu-prof-interval=200',
    bundle,
    '300',
  ]);
  summary = summarize(readProfiles(profDir), root);
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Where V8 places a function of the bundle: its parameter list's opening parenthesis. */
function positionOf(text: string, marker: string): { line: number; column: number } {
  const at = text.indexOf(marker);
  if (at < 0) throw new Error(`${marker} not in the bundle`);
  const before = text.slice(0, at + marker.length - 1).split('\n');
  return { line: before.length - 1, column: before.at(-1)!.length };
}

describe('sourceResolver', () => {
  it("maps a bundle's positions to the original files and lines", () => {
    const text = readFileSync(bundle, 'utf8');
    const resolve = sourceResolver();
    const url = pathToFileURL(bundle).href;
    const burn = positionOf(text, 'function burn(');
    expect(resolve(url, burn.line, burn.column)).toEqual({
      file: join(root, 'services/demo/src/work.ts'),
      line: 3,
    });
    const pad = positionOf(text, 'function leftpad2(');
    expect(resolve(url, pad.line, pad.column)).toEqual({
      file: join(root, 'node_modules/leftpad/index.js'),
      line: 1,
    });
  });

  it('keeps the position of a script without a source map, and of node internals', () => {
    const plain = join(root, 'dist', 'plain.js');
    writeFileSync(plain, readFileSync(bundle, 'utf8').replace(/\/\/# sourceMappingURL=.*/, ''));
    const resolve = sourceResolver();
    expect(resolve(pathToFileURL(plain).href, 0, 1200)).toEqual({ file: plain, line: 0 });
    expect(resolve('node:internal/timers', 5, 3)).toEqual({ file: 'node:internal/timers', line: 5 });
    expect(resolve('', 0, 0)).toEqual({ file: '', line: 0 });
  });

  it('reads a map that sits elsewhere than beside the script, by its sourceMappingURL', () => {
    const moved = join(root, 'maps', 'demo.map');
    mkdirSync(dirname(moved), { recursive: true });
    copyFileSync(`${bundle}.map`, moved);
    const copy = join(root, 'dist', 'moved.js');
    writeFileSync(
      copy,
      readFileSync(bundle, 'utf8').replace(/sourceMappingURL=.*/, 'sourceMappingURL=../maps/demo.map'),
    );
    const burn = positionOf(readFileSync(copy, 'utf8'), 'function burn(');
    // The map's sources are relative to the map: ../services/… from maps/ is still the tree's file.
    expect(sourceResolver()(pathToFileURL(copy).href, burn.line, burn.column)).toEqual({
      file: join(root, 'services/demo/src/work.ts'),
      line: 3,
    });
  });
});

describe('summarize over a bundle', () => {
  it("lists the repository's functions by their TypeScript file and line", () => {
    const own = summary.top_own_inclusive.map((f) => `${f.fn} ${f.where}`);
    expect(own).toEqual(
      expect.arrayContaining(['burn services/demo/src/work.ts:4', 'spin services/demo/src/main.ts:3']),
    );
  });

  it('puts the time in the areas of the sources, not of the bundle', () => {
    const areas = Object.fromEntries(summary.top_areas.map((a) => [a.area, a.pct_busy]));
    // All but start-up (the bundle's module helpers, a few samples) is burn() and leftpad().
    const sources = (areas['services/demo/src'] ?? 0) + (areas.leftpad ?? 0);
    expect(sources).toBeGreaterThan(10 * (areas['dist/demo.js'] ?? 0));
    expect(sources).toBeGreaterThan(0);
  });
});
