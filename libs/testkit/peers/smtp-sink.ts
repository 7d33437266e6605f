import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../process';

/** One message Postfix's smtp-sink dumped: the envelope it saw and the message as received. */
export interface SinkMessage {
  file: string;
  from: string;
  to: string[];
  /** Message headers and body (smtp-sink's own X-* and Received lines removed). */
  message: string;
}

export interface SmtpSink {
  port: number;
  /** Messages whose transaction has ended (empty unless started with `dump: true`). */
  messages(): SinkMessage[];
  /** Resolves once `n` messages were dumped. */
  waitForMessages(n: number, timeoutMs?: number): Promise<SinkMessage[]>;
  stop(): Promise<void>;
}

export interface SmtpSinkOptions {
  port?: number;
  /** Dump every message to a file (`-d`); off for benchmarks, which only count. */
  dump?: boolean;
  /** Connection backlog (default 256). */
  backlog?: number;
}

/**
 * Postfix's `smtp-sink` on 127.0.0.1:<port>: accepts every message (250) and, with `dump`,
 * writes each to a file (`-d <dir>/%M.`); as root it must run as another user (`-u nobody`).
 * Without `port`, a free port is only a candidate (freePort releases it before smtp-sink binds
 * it): a start that fails with "Address already in use" tries another.
 */
export async function startSmtpSink(opts: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const dir = mkdtempSync(join(tmpdir(), 'mailyard-smtp-sink-'));
  chmodSync(dir, 0o777);
  for (let attempt = 0; ; attempt++) {
    const port = opts.port ?? (await freePort());
    try {
      return await launchSink(opts, port, dir);
    } catch (err) {
      if (opts.port || !/in use/i.test((err as Error).message) || attempt >= 5) {
        rmSync(dir, { recursive: true, force: true });
        throw err;
      }
    }
  }
}

async function launchSink(opts: SmtpSinkOptions, port: number, dir: string): Promise<SmtpSink> {
  const args = [
    '-u',
    'nobody',
    ...(opts.dump ? ['-d', `${dir}/%M.`] : []),
    `127.0.0.1:${port}`,
    String(opts.backlog ?? 256),
  ];
  const child: ChildProcess = spawn('smtp-sink', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const failed = new Promise<never>((_, reject) => {
    child.once('error', (err) =>
      reject(new Error(`smtp-sink could not start (is postfix installed?): ${err.message}`)),
    );
    child.once('exit', (code) => reject(new Error(`smtp-sink exited with ${code}: ${stderr}`)));
  });
  failed.catch(() => {});
  await Promise.race([waitForPort(port), failed]);

  // smtp-sink writes a dump file as the transaction's commands arrive and closes it at the final
  // dot: a file it still holds open is a message in progress (no recipients or body yet).
  const inProgress = (): Set<string> => {
    const open = new Set<string>();
    const fds = `/proc/${child.pid}/fd`;
    let entries: string[] = [];
    try {
      entries = readdirSync(fds);
    } catch {
      return open;
    }
    for (const fd of entries) {
      try {
        open.add(readlinkSync(join(fds, fd)));
      } catch {
        // closed between the listing and the readlink
      }
    }
    return open;
  };
  const read = (): SinkMessage[] => {
    const open = inProgress();
    const files = readdirSync(dir)
      .filter((file) => !open.has(join(dir, file)))
      .sort();
    const out: SinkMessage[] = [];
    for (const file of files) {
      const text = readFileSync(join(dir, file), 'utf8');
      out.push(parseDump(file, text));
    }
    return out;
  };

  return {
    port,
    messages: read,
    async waitForMessages(n, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const messages = read();
        if (messages.length >= n) return messages;
        if (Date.now() > deadline)
          throw new Error(`smtp-sink dumped ${messages.length} of ${n} messages within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** smtp-sink's dump: X-Client-*, X-Helo-Args, X-Mail-Args, X-Rcpt-Args lines, its Received header, then the message. */
export function parseDump(file: string, text: string): SinkMessage {
  const lines = text.split(/\r?\n/);
  let from = '';
  const to: string[] = [];
  let i = 0;
  for (; i < lines.length; i++) {
    const line = lines[i]!;
    const mail = /^X-Mail-Args: <([^>]*)>/.exec(line);
    const rcpt = /^X-Rcpt-Args: <([^>]*)>/.exec(line);
    if (mail) from = mail[1]!;
    else if (rcpt) to.push(rcpt[1]!);
    else if (!/^X-(Client-Addr|Client-Proto|Helo-Args):/.test(line)) break;
  }
  // smtp-sink's own Received header (with its continuation lines)
  if (lines[i]?.startsWith('Received: from') && lines[i + 1]?.includes('by smtp-sink')) {
    i++;
    while (i < lines.length && /^\s/.test(lines[i]!)) i++;
  }
  return { file, from, to, message: lines.slice(i).join('\r\n') };
}

function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const socket = createConnection({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`smtp-sink did not listen on ${port}`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}
