/** CPU accounting for the benchmarks, from /proc (Linux): which process used how much CPU. */
import { readFileSync, readdirSync } from 'node:fs';

/** CPU seconds (user + system) used so far by processes, read from /proc. */
export function cpuSeconds(pids: number[]): number {
  const tick = 100; // USER_HZ on Linux
  let total = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / tick;
    } catch {
      // exited
    }
  }
  return total;
}

/** Pids of a process tree (tsx runs each service in a child node process). */
export function tree(pid: number): number[] {
  const children = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [pid, ...children.flatMap(tree)];
}

/** Pids whose command name is `name` (postgres, beam.smp, smtp-sink). */
export function byName(name: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/comm`, 'utf8').trim() === name;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/**
 * CPU seconds used by each named group of pids from now until the returned function is called
 * (a process that exited meanwhile counts for nothing, instead of taking its past usage away).
 */
export function cpuMeter(groups: Record<string, number[]>): () => Record<string, number> {
  const before = new Map<number, number>();
  for (const pids of Object.values(groups)) for (const pid of pids) before.set(pid, cpuSeconds([pid]));
  const used = (pid: number) => {
    const now = cpuSeconds([pid]);
    return now > 0 ? Math.max(0, now - (before.get(pid) ?? 0)) : 0;
  };
  return () =>
    Object.fromEntries(
      Object.entries(groups).map(([k, pids]) => [
        k,
        Number(pids.reduce((t, p) => t + used(p), 0).toFixed(3)),
      ]),
    );
}
