/**
 * Where a service process's CPU goes, from `perf record -g` of it (on-CPU samples, unlike
 * `--cpu-prof`, whose wall-clock self times collect the waits of a loaded machine). The service
 * runs with `--perf-basic-prof` so JIT frames are named `JS:<fn> <bundle>:<line>:<col>`; bundle
 * positions are turned back into source files through the bundle's source map (source-map.ts).
 *
 * What it reports, as shares of all samples (multiply by the process's CPU-ms per email for a
 * cost per email):
 * - threads: the event loop, RSA signatures on libuv's pool, V8's compiler and GC helper
 *   threads, the rest (pool threads waking and waiting);
 * - the event loop by area: each sample is charged to its innermost frame of the repository
 *   (its file: services/send/src/dkim.ts) or a package (nodemailer, pg…), else a node internal,
 *   else native;
 * - the event loop's system calls (innermost libc wrapper under the kernel entry) and, for each,
 *   the repository frames that made it.
 *
 *   perf script -i send.perf -F tid,ip,sym > send.txt
 *   pnpm tsx bench/support/perf-breakdown.ts send.txt
 * (bench/send/perf-batch.sh records one batch phase of `pnpm bench:send` this way.)
 */
import { readFileSync } from 'node:fs';
import { REPO_ROOT } from '@mailyard/testkit/process';
import { areaOf } from './profile';
import { sourceResolver } from './source-map';

export interface PerfSample {
  tid: string;
  /** Symbols, innermost first. */
  frames: string[];
}

/** `perf script -F tid,ip,sym` output (a header line per sample, then one frame per line). */
export function parsePerfScript(text: string): PerfSample[] {
  const samples: PerfSample[] = [];
  let current: PerfSample | null = null;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    // Frames are tab-indented; a sample's header may start with spaces (perf pads short tids).
    if (!line.startsWith('\t')) {
      current = { tid: line.trim().split(/\s+/)[0]!, frames: [] };
      samples.push(current);
      continue;
    }
    const m = /^\s*[0-9a-f]+\s+(.*)$/.exec(line);
    if (current && m) current.frames.push(m[1]!);
  }
  return samples;
}

export type ThreadKind = 'event loop' | 'rsa (pool)' | 'jit compiler' | 'gc helper' | 'other threads';

/** What a sample of a thread other than the event loop is doing. */
export function threadKind(frames: readonly string[]): Exclude<ThreadKind, 'event loop'> {
  const all = frames.join('\n');
  if (all.includes('SignTraits') || /\bbn_|BN_mod_exp|rsaz_/.test(all)) return 'rsa (pool)';
  if (/Compile|Turbofan|Maglev|Optimiz/.test(all)) return 'jit compiler';
  if (/Heap|Scaveng|Marking|Sweep|GC/.test(all)) return 'gc helper';
  return 'other threads';
}

export interface PlacedFrame {
  area: string;
  fn: string;
  /** A repository or package frame (not node internals, not native). */
  own: boolean;
}

/** A frame placed in its source: `JS:` frames through the source map, the rest as native. */
export function framePlacer(root: string): (symbol: string) => PlacedFrame {
  const resolve = sourceResolver();
  const cache = new Map<string, PlacedFrame>();
  return (symbol) => {
    let placed = cache.get(symbol);
    if (placed) return placed;
    const m = /^JS:[*^~+]?(\S*) (\S+):(\d+):(\d+)$/.exec(symbol);
    if (!m) placed = { area: '(native)', fn: symbol, own: false };
    else if (m[2]!.startsWith('node:')) placed = { area: areaOf(m[2]!, m[1]!, root), fn: m[1]!, own: false };
    else {
      const pos = resolve(m[2]!, Number(m[3]) - 1, Number(m[4]) - 1);
      const pkg = areaOf(pos.file, m[1]!, root);
      // A repository file by its path (services/send/src/consumer.ts), a package by its name.
      const inRepo = pos.file.startsWith(`${root}/`) && !pos.file.includes('/node_modules/');
      const area = inRepo ? pos.file.slice(root.length + 1) : pkg;
      placed = { area, fn: `${m[1] || '(anonymous)'} ${area}:${pos.line + 1}`, own: true };
    }
    cache.set(symbol, placed);
    return placed;
  };
}

export interface Breakdown {
  samples: number;
  threads: Record<ThreadKind, number>;
  /** Event-loop samples by area, as shares of ALL samples. */
  eventLoopAreas: Record<string, number>;
  /** Event-loop system calls (shares of all samples) and the repository frames that made them. */
  syscalls: Record<string, { share: number; callers: Record<string, number> }>;
}

const share = (n: number, total: number) => Number((n / total).toFixed(4));

function sortedShares(counts: Map<string, number>, total: number, min = 0.002): Record<string, number> {
  return Object.fromEntries(
    [...counts.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => [k, share(v, total)] as const)
      .filter(([, v]) => v >= min),
  );
}

/** The breakdown of `samples`; the event loop is the thread with the most samples. */
export function breakdown(samples: readonly PerfSample[], place: (symbol: string) => PlacedFrame): Breakdown {
  const perTid = new Map<string, number>();
  for (const s of samples) perTid.set(s.tid, (perTid.get(s.tid) ?? 0) + 1);
  const loop = [...perTid.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  const threads: Record<ThreadKind, number> = {
    'event loop': 0,
    'rsa (pool)': 0,
    'jit compiler': 0,
    'gc helper': 0,
    'other threads': 0,
  };
  const areas = new Map<string, number>();
  const calls = new Map<string, Map<string, number>>();
  for (const s of samples) {
    if (s.tid !== loop) {
      threads[threadKind(s.frames)]++;
      continue;
    }
    threads['event loop']++;
    const placed = s.frames.map(place);
    const at = placed.find((p) => p.own) ?? placed.find((p) => p.area.startsWith('node:'));
    const area = at?.area ?? '(native only)';
    areas.set(area, (areas.get(area) ?? 0) + 1);
    const entry = s.frames.findLastIndex((f) => f.startsWith('entry_SYSCALL'));
    if (entry >= 0 && entry + 1 < s.frames.length) {
      const wrapper = s.frames[entry + 1]!;
      const caller = placed
        .slice(entry + 1)
        .find((p) => p.own && /^(services|libs)\//.test(p.fn.split(' ')[1] ?? ''));
      const byCaller = calls.get(wrapper) ?? new Map<string, number>();
      const key = caller?.fn ?? '(no repository frame)';
      byCaller.set(key, (byCaller.get(key) ?? 0) + 1);
      calls.set(wrapper, byCaller);
    }
  }
  const total = samples.length;
  const syscalls: Breakdown['syscalls'] = {};
  for (const [wrapper, byCaller] of [...calls.entries()].sort(
    (a, b) => sum(b[1].values()) - sum(a[1].values()),
  )) {
    syscalls[wrapper] = {
      share: share(sum(byCaller.values()), total),
      callers: sortedShares(byCaller, total),
    };
  }
  return {
    samples: total,
    threads: Object.fromEntries(Object.entries(threads).map(([k, v]) => [k, share(v, total)])) as Record<
      ThreadKind,
      number
    >,
    eventLoopAreas: sortedShares(areas, total),
    syscalls,
  };
}

function sum(xs: Iterable<number>): number {
  let n = 0;
  for (const x of xs) n += x;
  return n;
}

if (process.argv[1]?.endsWith('perf-breakdown.ts')) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: perf-breakdown.ts <perf script -F tid,ip,sym output>');
  const result = breakdown(parsePerfScript(readFileSync(file, 'utf8')), framePlacer(REPO_ROOT));
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
