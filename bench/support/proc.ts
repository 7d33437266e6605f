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

/** CPU seconds used by each named group of pids from now until the returned function is called. */
export function cpuMeter(groups: Record<string, number[]>): () => Record<string, number> {
  const before = Object.fromEntries(Object.entries(groups).map(([k, pids]) => [k, cpuSeconds(pids)]));
  return () =>
    Object.fromEntries(
      Object.entries(groups).map(([k, pids]) => [k, Number((cpuSeconds(pids) - before[k]!).toFixed(3))]),
    );
}
