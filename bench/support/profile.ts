/**
 * Summaries of V8 CPU profiles (`node --cpu-prof`), for every benchmark that profiles a service:
 * self time per function and per area (package, repository folder, node internals, GC), and the
 * repository's own functions by inclusive time, counted only over the samples taken inside the
 * measured windows, so start-up and warm-up do not show. Profile timestamps and process.hrtime
 * are both CLOCK_MONOTONIC microseconds on Linux, so a window taken by the benchmark process
 * applies to the services' profiles.
 *
 * Each frame is placed by its original source (./source-map): the services run as esbuild bundles,
 * whose frames all point into dist/bin/<service>.js until the bundle's source map resolves them.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { type SourcePosition, sourceResolver } from './source-map';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A window in monotonic microseconds (monotonicUs()). */
export interface Window {
  fromUs: number;
  toUs: number;
}

export const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

export interface ProfileSummary {
  /** Milliseconds of samples inside the window (idle included). */
  sampled_ms: number;
  /** Milliseconds of non-idle samples: what the process spent on the CPU by the profiler's count. */
  busy_ms: number;
  top_functions: Array<{ fn: string; where: string; self_ms: number; pct_busy: number }>;
  top_areas: Array<{ area: string; self_ms: number; pct_busy: number }>;
  /**
   * The repository's own functions (services/, libs/) by inclusive time: their self time and
   * that of everything they called synchronously (what one step of the pipeline costs).
   */
  top_own_inclusive: Array<{ fn: string; where: string; self_ms: number; pct_busy: number }>;
}

const repoPath = (url: string, root: string) => url.replace(/^file:\/\//, '').replace(`${root}/`, '');

/** A path as the tables show it: a package's files from the package's name on. */
const shortPath = (path: string) =>
  path.replace(/^(?:.*\/)?node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?/, '');

/** Where a frame's code lives: a package, a repository folder, node internals, or a V8 pseudo-frame. */
export function areaOf(url: string, fn: string, root: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/').slice(0, 2).join('/')}`;
  const path = repoPath(url, root);
  const pkg = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return pkg[1]!;
  return path.split('/').slice(0, 3).join('/');
}

const resolvePosition = sourceResolver();

/** A frame's original file (repository-relative when under `root`) and 1-based line. */
function sourceOf(frame: ProfileNode['callFrame'], root: string): { path: string; line: number } {
  const pos: SourcePosition = resolvePosition(frame.url, frame.lineNumber, frame.columnNumber);
  return { path: repoPath(pos.file, root), line: pos.line + 1 };
}

function top<T extends { self_ms: number }>(m: Map<string, T>, n: number): T[] {
  return [...m.values()].sort((a, b) => b.self_ms - a.self_ms).slice(0, n);
}

/** Self time of each frame of `profile` over `windows` (all samples when empty), and the time sampled. */
function selfTimes(
  profile: CpuProfile,
  windows: Window[],
): { self: Map<ProfileNode, number>; sampled: number } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<ProfileNode, number>();
  let t = profile.startTime;
  let sampled = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    if (windows.length > 0 && !windows.some((w) => t >= w.fromUs && t <= w.toUs)) continue;
    const node = byId.get(profile.samples[i]!)!;
    self.set(node, (self.get(node) ?? 0) + dt);
    sampled += dt;
  }
  return { self, sampled };
}

/** Inclusive time of the repository's own functions: each sample counts once for every distinct one on its stack. */
function ownInclusive(
  profile: CpuProfile,
  self: Map<ProfileNode, number>,
  root: string,
): Map<string, number> {
  const parent = new Map<number, ProfileNode>();
  for (const node of profile.nodes) for (const c of node.children ?? []) parent.set(c, node);
  const out = new Map<string, number>();
  for (const [node, us] of self) {
    if (node.callFrame.functionName === '(idle)') continue;
    const seen = new Set<string>();
    for (let n: ProfileNode | undefined = node; n; n = parent.get(n.id)) {
      const { path, line } = sourceOf(n.callFrame, root);
      if (!/^(services|libs)\//.test(path) || path.includes('node_modules')) continue;
      const key = `${n.callFrame.functionName || '(anonymous)'}\u0000${path}:${line}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.set(key, (out.get(key) ?? 0) + us);
    }
  }
  return out;
}

/**
 * Self time per function and area over `windows` (all samples when omitted), summed over the
 * profiles of one process (node writes one per thread: the main thread and tsx's loader).
 * `root` is the checkout the services ran from: paths under it show relative to it.
 */
export function summarize(
  profiles: CpuProfile[],
  root: string,
  windows: Window | Window[] = [],
  n = 25,
): ProfileSummary {
  const within = Array.isArray(windows) ? windows : [windows];
  const fns = new Map<string, { fn: string; where: string; self_ms: number; pct_busy: number }>();
  const areas = new Map<string, { area: string; self_ms: number; pct_busy: number }>();
  let busy = 0;
  let sampled = 0;
  const frames: Array<[ProfileNode, number]> = [];
  const inclusive = new Map<string, { fn: string; where: string; self_ms: number; pct_busy: number }>();
  for (const profile of profiles) {
    const t = selfTimes(profile, within);
    sampled = Math.max(sampled, t.sampled);
    frames.push(...t.self);
    for (const [key, us] of ownInclusive(profile, t.self, root)) {
      const [fn = '', where = ''] = key.split('\u0000');
      const f = inclusive.get(key) ?? { fn, where, self_ms: 0, pct_busy: 0 };
      f.self_ms += us / 1000;
      inclusive.set(key, f);
    }
  }
  for (const [node, us] of frames) {
    const fn = node.callFrame.functionName || '(anonymous)';
    if (fn === '(idle)') continue;
    busy += us;
    const { path, line } = sourceOf(node.callFrame, root);
    const where = path ? `${shortPath(path)}:${line}` : '';
    const key = `${fn} ${where}`;
    const f = fns.get(key) ?? { fn, where, self_ms: 0, pct_busy: 0 };
    f.self_ms += us / 1000;
    fns.set(key, f);
    const area = areaOf(path, fn, root);
    const a = areas.get(area) ?? { area, self_ms: 0, pct_busy: 0 };
    a.self_ms += us / 1000;
    areas.set(area, a);
  }
  const finish = <T extends { self_ms: number; pct_busy: number }>(rows: T[]) =>
    rows.map((r) => ({
      ...r,
      self_ms: Math.round(r.self_ms),
      pct_busy: busy > 0 ? Number(((r.self_ms * 100_000) / busy).toFixed(1)) : 0,
    }));
  return {
    sampled_ms: Math.round(sampled / 1000),
    busy_ms: Math.round(busy / 1000),
    top_functions: finish(top(fns, n)),
    top_areas: finish(top(areas, 15)),
    top_own_inclusive: finish(top(inclusive, 25)),
  };
}

/** The .cpuprofile files node wrote in `dir` (a directory per process, a profile per thread). */
export function readProfiles(dir: string): CpuProfile[] {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  } catch {
    return [];
  }
  return files.map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as CpuProfile);
}

/** The summaries as a short text: per process, the areas and the top functions. */
export function summaryText(title: string, summaries: Record<string, ProfileSummary>): string {
  const out = [`# ${title}`, ''];
  for (const [name, s] of Object.entries(summaries)) {
    out.push(`## ${name}: ${s.busy_ms} ms busy of ${s.sampled_ms} ms sampled`, '');
    out.push('| area | self ms | % busy |', '|---|---:|---:|');
    for (const a of s.top_areas) out.push(`| ${a.area} | ${a.self_ms} | ${a.pct_busy} |`);
    out.push('', '| function | where | self ms | % busy |', '|---|---|---:|---:|');
    for (const f of s.top_functions) out.push(`| ${f.fn} | ${f.where} | ${f.self_ms} | ${f.pct_busy} |`);
    out.push('', '| own function (inclusive) | where | ms | % busy |', '|---|---|---:|---:|');
    for (const f of s.top_own_inclusive) out.push(`| ${f.fn} | ${f.where} | ${f.self_ms} | ${f.pct_busy} |`);
    out.push('');
  }
  return out.join('\n');
}
