/**
 * What the benchmarks read from /proc (Linux): CPU seconds of processes, pids by command name,
 * and a process's resident set (now and its peak). Benchmark support only.
 */
import { readFileSync, readdirSync } from 'node:fs';

const USER_HZ = 100;

/** user + system CPU seconds of one process so far and its start time (ticks since boot); null when it is gone. */
function statOf(pid: number): { cpu: number; started: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { cpu: (Number(fields[11]) + Number(fields[12])) / USER_HZ, started: fields[19]! };
  } catch {
    return null;
  }
}

/** Pids whose command name is `name` (postgres, beam.smp, imap). */
export function pidsByName(name: string): number[] {
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

/** VmRSS and VmHWM (peak resident set) of a process in MB; zeros when it is gone. */
export function rssMb(pid: number): { rss: number; peak: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
    return { rss: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) };
  } catch {
    return { rss: 0, peak: 0 };
  }
}

/**
 * CPU seconds of a changing set of processes (e.g. Dovecot's per-connection `imap` processes,
 * which exit with their connection): sample() remembers each process's latest reading, so the
 * CPU of a process that exited after its last sample still counts. Processes are told apart by
 * pid and start time (a pid is reused by a later process).
 */
export class CpuTally {
  private readonly start = new Map<string, number>();
  private readonly last = new Map<string, number>();

  constructor(private readonly pids: () => number[]) {
    for (const pid of pids()) {
      const s = statOf(pid);
      if (s) this.start.set(`${pid}:${s.started}`, s.cpu);
    }
  }

  sample(): void {
    for (const pid of this.pids()) {
      const s = statOf(pid);
      if (s) this.last.set(`${pid}:${s.started}`, s.cpu);
    }
  }

  /** CPU seconds used since construction. */
  seconds(): number {
    this.sample();
    let total = 0;
    for (const [key, now] of this.last) total += now - (this.start.get(key) ?? 0);
    return total;
  }
}
