import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const REPO_ROOT = join(__dirname, '..', '..');

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

export interface Spawned {
  child: ChildProcess;
  output(): string;
  /** Resolves when the combined output matches `re`; rejects if the process exits first. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Runs a TypeScript entry point in ONE node process (tsx as a loader, not its launcher), so
 * signals such as SIGKILL reach the service itself. Captures stdout+stderr.
 */
export function spawnTs(
  script: string,
  env: Record<string, string | undefined>,
  args: string[] = [],
): Spawned {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_SILENT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const waiters: Array<() => void> = [];
  const onData = (d: Buffer) => {
    out += d.toString();
    waiters.forEach((w) => w());
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      resolve({ code, signal });
      waiters.forEach((w) => w());
    }),
  );
  return {
    child,
    output: () => out,
    exited,
    waitFor(re, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`timed out waiting for ${re}; output:\n${out}`)),
          timeoutMs,
        );
        const check = () => {
          const m = re.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[0]);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            clearTimeout(timer);
            reject(new Error(`process exited before ${re}; output:\n${out}`));
          }
        };
        waiters.push(check);
        check();
      });
    },
  };
}
