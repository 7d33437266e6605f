import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Runs Debian's `swaks` against an SMTP server on `host:port` and resolves with its transcript
 * (stdout + stderr) whether the server accepted or not: tests read the replies from it
 * (`<-  250 ...` accepted, `<** 550 ...` rejected, `<~` over TLS).
 */
export async function swaks(port: number, args: string[], host = '127.0.0.1'): Promise<string> {
  try {
    const r = await run('swaks', ['--server', host, '--port', String(port), '--timeout', '30', ...args], {
      maxBuffer: 64 * 1024 * 1024,
    });
    return r.stdout + r.stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    if (e.stdout === undefined) throw err;
    return `${e.stdout}${e.stderr ?? ''}`;
  }
}
