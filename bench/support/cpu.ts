/**
 * CPU accounting for the benchmarks: user + system time of process groups read from
 * /proc/<pid>/stat (utime + stime, in USER_HZ ticks) before and after a measured window.
 * Groups are functions returning pids, re-read at both ends, so processes that start during the
 * window (a new PostgreSQL backend of a pool) count from zero; a process that exits during the
 * window loses its share (it can no longer be read).
 */
import { readFileSync, readdirSync } from 'node:fs';

const USER_HZ = 100;

/** CPU milliseconds (user + system) used so far by `pid` and its start time (ticks since boot); null when it is gone. */
function statOf(pid: number): { ms: number; started: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ms: ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ, started: fields[19]! };
  } catch {
    return null;
  }
}

/** CPU milliseconds (user + system) used so far by `pid`, or null when it is gone. */
export function cpuMsOf(pid: number): number | null {
  return statOf(pid)?.ms ?? null;
}

function numericDirs(): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
}

/** `pid` and its descendants. */
export function processTree(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const p of numericDirs()) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), p]);
    } catch {
      // exited
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    out.push(p);
    for (const c of parents.get(p) ?? []) walk(c);
  };
  walk(pid);
  return out;
}

/** Pids whose command name is `name` (postgres, beam.smp, smtp-sink). */
export function pidsByName(name: string): number[] {
  return numericDirs().filter((d) => {
    try {
      return readFileSync(`/proc/${d}/comm`, 'utf8').trim() === name;
    } catch {
      return false;
    }
  });
}

/**
 * The RabbitMQ server's Erlang VM(s): `beam.smp` processes other than the short-lived hidden
 * nodes every `rabbitmqctl` call starts (also `beam.smp`; other sessions' tests run many, whose
 * CPU would otherwise count as the broker's and whose exit makes a sum over pids drop).
 */
export function rabbitmqServerPids(): number[] {
  return pidsByName('beam.smp').filter((p) => {
    try {
      return !readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').includes('-hidden');
    } catch {
      return false;
    }
  });
}

export type PidSource = () => number[] | Promise<number[]>;

/** Measures CPU milliseconds per group over a window (start() ... stop()). */
export class CpuMeter {
  private before = new Map<string, Map<number, number>>();

  /**
   * `nested`: a pid counts in every group naming it (groups that contain one another, such as
   * this database's PostgreSQL backends within the whole server); otherwise only in the first.
   */
  constructor(
    private readonly groups: Record<string, PidSource>,
    private readonly opts: { nested?: boolean } = {},
  ) {}

  async start(): Promise<void> {
    this.before.clear();
    for (const [name, source] of Object.entries(this.groups)) {
      const at = new Map<number, number>();
      for (const pid of await source()) {
        const ms = cpuMsOf(pid);
        if (ms !== null) at.set(pid, ms);
      }
      this.before.set(name, at);
    }
  }

  /**
   * CPU milliseconds each group used since start() (its pids at start and now; a pid new since
   * start counts from zero); a pid counts only in the first group naming it unless `nested`.
   */
  async stop(): Promise<Record<string, number>> {
    const seen = new Set<number>();
    const out: Record<string, number> = {};
    for (const [name, source] of Object.entries(this.groups)) {
      const at = this.before.get(name) ?? new Map<number, number>();
      let total = 0;
      for (const pid of new Set([...at.keys(), ...(await source())])) {
        if (seen.has(pid) && !this.opts.nested) continue;
        seen.add(pid);
        const now = cpuMsOf(pid);
        if (now !== null) total += now - (at.get(pid) ?? 0);
      }
      out[name] = total;
    }
    return out;
  }
}

/**
 * CPU seconds of a changing set of processes (e.g. Dovecot's per-connection `imap` processes,
 * which exit with their connection): sample() remembers each process's latest reading, so the
 * CPU of a process that exited after its last sample still counts (unlike CpuMeter). Processes
 * are told apart by pid and start time (a pid is reused by a later process).
 */
export class CpuTally {
  private readonly start = new Map<string, number>();
  private readonly last = new Map<string, number>();

  constructor(private readonly pids: () => number[]) {
    for (const pid of pids()) {
      const s = statOf(pid);
      if (s) this.start.set(`${pid}:${s.started}`, s.ms);
    }
  }

  sample(): void {
    for (const pid of this.pids()) {
      const s = statOf(pid);
      if (s) this.last.set(`${pid}:${s.started}`, s.ms);
    }
  }

  /** CPU seconds used since construction. */
  seconds(): number {
    this.sample();
    let total = 0;
    for (const [key, now] of this.last) total += now - (this.start.get(key) ?? 0);
    return total / 1000;
  }
}
