import { type ChildProcess, spawn } from 'node:child_process';
import { type Server, createServer } from 'node:net';
import { join } from 'node:path';

export const REPO_ROOT = join(__dirname, '..', '..');

/**
 * A port the kernel had free a moment ago. RACY: it is released before the caller binds it, so
 * another process may take it first. Prefer binding port 0 and reading the bound port (the
 * services print it in their banner: apiUrl()); where a port must be chosen up front, retry on
 * EADDRINUSE (startOnFreePort).
 */
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

/**
 * Listens on `port` on a loopback address of its own, 127.x.y.z with x >= 1 (never 127.0.0.x, which
 * tests use as "nothing listens here"), trying other addresses while one is in use: for servers
 * that must sit on a fixed port (basic IMAP is 993 only) without colliding with other tests.
 */
export async function listenOnLoopbackAlias(server: Server, port: number): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const octet = () => 1 + Math.floor(Math.random() * 254);
    const host = `127.${octet()}.${octet()}.${octet()}`;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      return host;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 20) throw err;
    }
  }
}

/**
 * A loopback address of its own (as listenOnLoopbackAlias picks them) where `port` is closed: the
 * port was bound there and released just now, and no test listens on a random address another
 * picked, so a connection to it is refused (for "the server is unreachable" cases on a fixed port).
 */
export async function closedLoopbackAddress(port: number): Promise<string> {
  const server = createServer();
  const host = await listenOnLoopbackAlias(server, port);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return host;
}

/** The API base URL a started gateway printed in its banner (PORT=0 binds any free port). */
export function apiUrl(p: Spawned): string {
  const url = /API (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(p.output())?.[1];
  if (!url) throw new Error(`no API URL in the banner:\n${p.output()}`);
  return url;
}

/**
 * The ops URL (`/healthz`, `/readyz`, `/metrics`) a started process printed in its banner. Spawned
 * processes get OPS_PORT=0 unless the caller sets it: any free port, named there.
 */
export function opsUrl(p: Spawned): string {
  const m = /ops: http:\/\/([^:/\s]+):(\d+)\/healthz/.exec(p.output());
  if (!m) throw new Error(`no ops URL in the banner:\n${p.output()}`);
  return `http://${m[1] === '0.0.0.0' ? '127.0.0.1' : m[1]}:${m[2]}`;
}

/**
 * Spawns a process that must listen on a port chosen up front (freePort), and waits for `ready`;
 * when it fails with EADDRINUSE because another process took the port meanwhile, tries another.
 */
export async function startOnFreePort(
  spawnWith: (port: number) => Spawned,
  ready: RegExp,
  timeoutMs = 60_000,
): Promise<{ p: Spawned; port: number }> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const p = spawnWith(port);
    const seen = await p.waitFor(new RegExp(`${ready.source}|EADDRINUSE`), timeoutMs);
    if (!seen.includes('EADDRINUSE')) return { p, port };
    p.child.kill('SIGKILL');
    await p.exited;
    if (attempt >= 5) throw new Error(`port ${port} in use, gave up:\n${p.output()}`);
  }
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
 * signals such as SIGKILL reach the service itself. Captures stdout+stderr. `nodeArgs` go to node
 * itself (e.g. `--cpu-prof`, which NODE_OPTIONS does not take); a `.js` script (a bundle) runs
 * without tsx.
 */
export function spawnTs(
  script: string,
  env: Record<string, string | undefined>,
  args: string[] = [],
  /** Options for node itself, e.g. `--cpu-prof` (not allowed in NODE_OPTIONS). */
  nodeArgs: string[] = [],
): Spawned {
  const loader = script.endsWith('.js') ? [] : ['--import', 'tsx'];
  return spawnNode([...nodeArgs, ...loader, script, ...args], env);
}

/**
 * Runs a compiled entry point (dist/bin/<name>.js) the way `pnpm start` does: scripts/run-dist.mjs
 * builds dist/bin first when it is missing or older than the sources, then runs it in its own
 * process. Captures stdout+stderr.
 */
export function spawnCompiled(
  name: string,
  env: Record<string, string | undefined>,
  args: string[] = [],
): Spawned {
  return spawnNode(['scripts/run-dist.mjs', name, ...args], env);
}

/**
 * `node <nodeArgs>` in the repository root, in one process. Captures stdout+stderr. The ops port
 * is any free one (OPS_PORT=0, see opsUrl) unless `env` names one: parallel tests never collide
 * on a process's default.
 */
export function spawnNode(nodeArgs: string[], env: Record<string, string | undefined>): Spawned {
  const child = spawn(process.execPath, nodeArgs, {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_SILENT: '0', LOG_LEVEL: 'warn', OPS_PORT: '0', ...env },
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
