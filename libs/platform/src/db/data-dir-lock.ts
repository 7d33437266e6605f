/**
 * Exclusive lock on an embedded data directory (DATA_DIR). PGlite serves ONE process per data
 * directory: a second process opening it starts fine, answers requests, and silently loses
 * acknowledged writes when the two overwrite each other's files. So every process that opens
 * PGlite on a directory (the services, `pnpm migrate`, `pnpm cli`) takes this lock first, and a
 * second one is refused at once with a DataDirLockedError naming the directory and the holder.
 *
 * The lock is `DATA_DIR/mailyard.lock`, a JSON record {pid, start, nonce, acquired_at}:
 * - taken atomically: the record is written to a private temp file and hard-linked into place
 *   (link(2) fails with EEXIST if a lock exists, and a reader never sees a half-written record);
 * - stale when its pid is gone, or when that pid now belongs to another process (pid reuse: the
 *   process start time in /proc/<pid>/stat differs from the recorded one). A stale lock is
 *   taken over by renaming it to a private name first, so of two racing takers only one wins;
 *   the winner checks it moved the record it judged stale (nonce) and puts back anything else;
 * - released on close, and by an exit hook if the process exits without closing. A process
 *   killed outright (SIGKILL, power loss) leaves a stale lock that the next start takes over.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError } from '../config/env';

export const LOCK_FILE = 'mailyard.lock';

/** What the lock file holds. */
export interface LockRecord {
  pid: number;
  /** Process start time (clock ticks since boot, /proc/<pid>/stat field 22); null off Linux. */
  start: string | null;
  nonce: string;
  acquired_at: string;
}

/** A data directory held by another live process. Subclass of ConfigError: entry points print it as one line and exit 1. */
export class DataDirLockedError extends ConfigError {
  override name = 'DataDirLockedError';
  constructor(
    readonly dataDir: string,
    readonly holderPid: number,
  ) {
    super(
      `DATA_DIR ${dataDir} is in use by another Mailyard process (pid ${holderPid}). ` +
        'The embedded database (PGlite) serves one process per data directory: stop that process first, ' +
        'use another DATA_DIR, or set DATABASE_URL to share a PostgreSQL server between processes.',
    );
  }
}

/** How to look at a process: injectable so the staleness rule is testable without real pids. */
export interface ProcessProbe {
  /** true when a process with this pid exists (kill(pid, 0) answers anything but ESRCH). */
  alive(pid: number): boolean;
  /** Its start time, or null when it cannot be read (no /proc, process gone). */
  startTime(pid: number): string | null;
}

/**
 * Pure rule: may a lock with this record be taken over? Yes when unreadable (null: a crash
 * between create and write cannot happen with link, so this is a foreign or corrupt file),
 * when the pid is gone, or when the pid is alive but started at another time (reused pid).
 */
export function isStale(record: LockRecord | null, probe: ProcessProbe): boolean {
  if (!record) return true;
  if (!probe.alive(record.pid)) return true;
  if (record.start === null) return false;
  const now = probe.startTime(record.pid);
  return now !== null && now !== record.start;
}

export const systemProbe: ProcessProbe = {
  alive(pid) {
    try {
      process.kill(pid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM';
    }
  },
  startTime(pid) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Field 2 (comm) is parenthesised and may hold spaces: count fields after the last ')'.
      // Those start at field 3, so starttime (field 22) is index 19.
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
    } catch {
      return null;
    }
  },
};

export interface DataDirLock {
  readonly path: string;
  /** Removes the lock file if it is still ours. Idempotent. */
  release(): void;
}

/** Lock files this process holds, released by one exit hook if close() never ran. */
const held = new Map<string, LockRecord>();
let exitHookInstalled = false;

/**
 * Takes the lock on `dataDir` (created if missing) or throws DataDirLockedError. A directory
 * already held in THIS process is refused as well: two PGlite instances on one directory
 * corrupt it just the same.
 */
export function lockDataDir(dataDir: string, probe: ProcessProbe = systemProbe): DataDirLock {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, LOCK_FILE);
  if (held.has(path)) throw new DataDirLockedError(dir, process.pid);

  const record: LockRecord = {
    pid: process.pid,
    start: probe.startTime(process.pid),
    nonce: randomBytes(12).toString('hex'),
    acquired_at: new Date().toISOString(),
  };
  const text = `${JSON.stringify(record)}\n`;
  const tmp = join(dir, `.${LOCK_FILE}.${process.pid}.${record.nonce}`);
  writeFileSync(tmp, text, { flag: 'wx', mode: 0o644 });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(tmp, path);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const existing = readLock(path);
      if (existing === undefined) continue; // vanished between link and read: try again
      if (!isStale(existing.record, probe) || attempt >= 5) {
        throw new DataDirLockedError(dir, existing.record?.pid ?? 0);
      }
      takeOver(path, existing.text);
    }
  } finally {
    unlinkQuietly(tmp);
  }

  held.set(path, record);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const [p, r] of held) removeIfOurs(p, r);
    });
  }
  let released = false;
  return {
    path,
    release() {
      if (released) return;
      released = true;
      held.delete(path);
      removeIfOurs(path, record);
    },
  };
}

/** The lock file's text and parsed record (null if unparsable); undefined if it does not exist. */
function readLock(path: string): { text: string; record: LockRecord | null } | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return { text, record: parseRecord(text) };
}

function parseRecord(text: string): LockRecord | null {
  try {
    const r = JSON.parse(text) as Partial<LockRecord>;
    if (typeof r.pid !== 'number' || !Number.isInteger(r.pid) || r.pid <= 0) return null;
    return {
      pid: r.pid,
      start: typeof r.start === 'string' ? r.start : null,
      nonce: String(r.nonce ?? ''),
      acquired_at: String(r.acquired_at ?? ''),
    };
  } catch {
    return null;
  }
}

/**
 * Moves a stale lock out of the way. rename(2) is atomic, so of two processes taking over the
 * same stale lock only one moves it; if what we moved is not the record we judged stale (another
 * taker already replaced it with a live lock), it goes back where it was.
 */
function takeOver(path: string, staleText: string): void {
  const aside = `${path}.stale.${process.pid}.${randomBytes(6).toString('hex')}`;
  try {
    renameSync(path, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  let moved = '';
  try {
    moved = readFileSync(aside, 'utf8');
  } catch {
    // unreadable: treat as the stale one
    moved = staleText;
  }
  if (moved !== staleText) {
    try {
      linkSync(aside, path);
    } catch {
      // someone locked in between; their lock stands and the next attempt sees it
    }
  }
  unlinkQuietly(aside);
}

function removeIfOurs(path: string, record: LockRecord): void {
  try {
    if (readLock(path)?.record?.nonce === record.nonce) unlinkQuietly(path);
  } catch {
    // unreadable now (directory removed or permissions changed): nothing of ours to remove
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}
