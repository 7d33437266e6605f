/**
 * Process helpers shared by the benchmarks: extra service settings from the environment, the
 * report written to stdout and kept in bench/results/, stopping a spawned service, memory of a
 * process from /proc (Linux), and the benchmark's entry point (a failure prints its stack and
 * exits 1). CPU accounting is in ./cpu.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, type Spawned } from '@mailyard/testkit/process';

/** Where the benchmarks keep their reports. */
export const RESULTS = join(REPO_ROOT, 'bench', 'results');

/** `A=1 B=2` -> {A: '1', B: '2'} (extra settings for a service, to compare tunings). */
export function envList(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (text ?? '').split(/\s+/).filter(Boolean)) {
    const i = pair.indexOf('=');
    if (i > 0) out[pair.slice(0, i)] = pair.slice(i + 1);
  }
  return out;
}

/** Prints `report` as JSON and keeps a copy in bench/results/<name>-<stamp>.json. */
export function printAndKeep(name: string, report: unknown, stamp = Date.now()): void {
  const json = JSON.stringify(report, null, 2);
  process.stdout.write(`${json}\n`);
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(join(RESULTS, `${name}-${stamp}.json`), json);
}

/** SIGTERM to a spawned process (unless it has already ended), then waits for its exit. */
export async function stopProcess(p: Spawned): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  await p.exited;
}

/** VmRSS and VmHWM (peak) of a process, in MB; zeros when it is gone. */
export function memory(pid: number): { rssMb: number; peakMb: number } {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return { rssMb: 0, peakMb: 0 };
  }
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { rssMb: Math.round(kb('VmRSS') / 1024), peakMb: Math.round(kb('VmHWM') / 1024) };
}

/** Runs a benchmark's main; a failure prints its stack and exits 1 (`exit`: exit 0 on success too). */
export function runMain(main: () => Promise<unknown>, opts: { exit?: boolean } = {}): void {
  main().then(
    () => {
      if (opts.exit) process.exit(0);
    },
    (err) => {
      process.stderr.write(`${(err as Error).stack}\n`);
      process.exit(1);
    },
  );
}
