/**
 * What the benchmarks read from /proc (Linux): CPU seconds of processes, pids by command name,
 * and a process's resident set (now and its peak). Benchmark support only.
 */
import { readFileSync, readdirSync } from 'node:fs';

const USER_HZ = 100;

/** user + system CPU seconds of one process so far, 0 when it is gone. */
export function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
  } catch {
    return 0;
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
 * which exit with their connection): sample() remembers each pid's latest reading, so the CPU
 * of a process that exited after its last sample still counts.
 */
export class CpuTally {
  private readonly start = new Map<number, number>();
  private readonly last = new Map<number, number>();

  constructor(private readonly pids: () => number[]) {
    for (const pid of pids()) this.start.set(pid, cpuSecondsOf(pid));
  }

  sample(): void {
    for (const pid of this.pids()) {
      const now = cpuSecondsOf(pid);
      if (now > 0) this.last.set(pid, now);
    }
  }

  /** CPU seconds used since construction. */
  seconds(): number {
    this.sample();
    let total = 0;
    for (const [pid, now] of this.last) total += now - (this.start.get(pid) ?? 0);
    return total;
  }
}
