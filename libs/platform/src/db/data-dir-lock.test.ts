import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DataDirLockedError,
  LOCK_FILE,
  type LockRecord,
  isStale,
  lockDataDir,
  systemProbe,
} from './data-dir-lock';

const record = (over: Partial<LockRecord> = {}): LockRecord => ({
  pid: 4242,
  start: '1000',
  nonce: 'n',
  acquired_at: '2026-01-01T00:00:00.000Z',
  ...over,
});
const probe = (alive: boolean, start: string | null) => ({ alive: () => alive, startTime: () => start });

describe('isStale', () => {
  it('holds a lock whose process is alive and started when recorded', () => {
    expect(isStale(record(), probe(true, '1000'))).toBe(false);
  });
  it('takes over a lock whose pid is gone', () => {
    expect(isStale(record(), probe(false, null))).toBe(true);
  });
  it('takes over a lock whose pid was reused by a later process', () => {
    expect(isStale(record(), probe(true, '2000'))).toBe(true);
  });
  it('holds a live pid when start times cannot be compared', () => {
    expect(isStale(record({ start: null }), probe(true, '2000'))).toBe(false);
    expect(isStale(record(), probe(true, null))).toBe(false);
  });
  it('takes over an unreadable lock file', () => {
    expect(isStale(null, probe(true, '1000'))).toBe(true);
  });
});

describe('lockDataDir', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mailyard-lock-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const lockText = () => JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as LockRecord;

  it('writes pid and start time, refuses a second taker, and releases on release()', () => {
    const lock = lockDataDir(dir);
    expect(lockText()).toMatchObject({ pid: process.pid, start: systemProbe.startTime(process.pid) });
    expect(() => lockDataDir(dir)).toThrow(DataDirLockedError);
    lock.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    lockDataDir(dir).release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses a lock held by another live process, naming the directory and its pid', () => {
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify(record({ pid: 77, start: '5' })));
    expect(() => lockDataDir(dir, probe(true, '5'))).toThrow(
      `DATA_DIR ${dir} is in use by another Mailyard process (pid 77)`,
    );
    expect(lockText().pid).toBe(77);
  });

  it('takes over a stale lock and leaves no stray files', () => {
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify(record({ pid: 77, start: '5' })));
    const lock = lockDataDir(dir, probe(false, null));
    expect(lockText().nonce).not.toBe('n');
    lock.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('does not remove a lock that is no longer its own', () => {
    const lock = lockDataDir(dir);
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify(record({ pid: 77 })));
    lock.release();
    expect(lockText().pid).toBe(77);
  });
});
