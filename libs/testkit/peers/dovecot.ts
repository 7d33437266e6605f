import { execFile, spawn } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SCRIPT_DIR = __dirname;

import { TEST_CA_KEY, leafCertificate, trustedTestCa } from './test-ca';

export { TEST_CA_CERT, TEST_CA_DIR, TEST_CA_KEY, ensureTestCa } from './test-ca';

export interface DovecotMessage {
  /** The whole RFC 5322 message (CRLF or LF line ends). */
  raw: string;
  /** INTERNALDATE (Maildir mtime); default now. */
  date?: Date;
  /** `INBOX` (default) or another folder, e.g. `Sent`, `Junk`, `Trash`. */
  folder?: string;
  seen?: boolean;
}

export interface DovecotOptions {
  user: string;
  pass: string;
  /** A count of generated messages (dates spread over the past year), or the messages themselves. */
  messages?: number | DovecotMessage[];
  /** IMAPS port; basic IMAP is port 993 only (docs/api/mailers.md), so that is the default. */
  port?: number;
  /**
   * Listen address. Default: a loopback address of its own (127.x.y.z, x >= 1), with a
   * certificate for it signed by the test CA, so several Dovecots can all sit on port 993.
   * `127.0.0.1` serves the test CA certificate itself and waits while 127.0.0.1:<port> is taken.
   */
  host?: string;
  /**
   * The CAPABILITY list Dovecot announces (its `imap_capability` setting) instead of its own,
   * e.g. `NO_IDLE_CAPABILITY` for a server without IDLE.
   */
  imapCapability?: string;
}

/**
 * A plain IMAP4rev1 server's capabilities, all of which Dovecot has, without IDLE: clients must
 * poll for new mail.
 */
export const NO_IDLE_CAPABILITY =
  'IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE LITERAL+ UIDPLUS NAMESPACE CHILDREN SPECIAL-USE UNSELECT ESEARCH';

export interface Dovecot {
  host: string;
  port: number;
  user: string;
  pass: string;
  /** The certificate Dovecot serves; the test process trusts it through NODE_EXTRA_CA_CERTS. */
  caPath: string;
  /** The server's own directory (log at `<dir>/dovecot.log`). */
  dir: string;
  /** Runs `doveadm` against this server (e.g. `mailbox update -u <user> --uid-validity N INBOX`). */
  doveadm(...args: string[]): Promise<string>;
  /** IMAP sessions logged in now (`doveadm who`). */
  sessions(): Promise<number>;
  /** Stops the server and its sessions, keeping its mail: connections drop, new ones are refused until resume(). */
  pause(): Promise<void>;
  /** Starts a paused server again on the same address, with the same mail. */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A real Dovecot IMAPS server on <host>:993 (root needed for the port) with one user, serving a
 * certificate the test CA vouches for. Fails fast when this process does not trust the test CA.
 */
export async function startDovecot(opts: DovecotOptions): Promise<Dovecot> {
  for (let attempt = 0; ; attempt++) {
    const host = opts.host ?? randomLoopbackAlias();
    try {
      return await startOn(opts, host);
    } catch (err) {
      // Another Dovecot drew the same address (very unlikely): draw again.
      if (opts.host || attempt >= 3) throw err;
    }
  }
}

function randomLoopbackAlias(): string {
  const octet = () => 1 + Math.floor(Math.random() * 254);
  return `127.${octet()}.${octet()}.${octet()}`;
}

async function startOn(opts: DovecotOptions, host: string): Promise<Dovecot> {
  const port = opts.port ?? 993;
  if (/[:\s/]/.test(opts.user) || /[:\n]/.test(opts.pass))
    throw new Error('dovecot peer: user/pass must not contain ":", "/" or whitespace');
  const caPath = await trustedTestCa('dovecot peer');
  await reapStale();
  // On 127.0.0.1, port 993 is shared by every test process on this machine: wait while another one holds it.
  const deadline = Date.now() + 120_000;
  while (host === '127.0.0.1' && (await isListening(port))) {
    if (Date.now() > deadline) throw new Error(`dovecot peer: 127.0.0.1:${port} is in use by something else`);
    await new Promise((r) => setTimeout(r, 250));
    await reapStale();
  }
  const dir = mkdtempSync(join(tmpdir(), DIR_PREFIX));
  writeFileSync(join(dir, 'owner.pid'), String(process.pid));
  seedMaildir(join(dir, 'home', opts.user, 'Maildir'), opts.user, opts.messages ?? 0);
  const script = join(SCRIPT_DIR, 'dovecot-up.sh');
  try {
    const served =
      host === '127.0.0.1' ? { cert: caPath, key: TEST_CA_KEY } : await leafCertificate(dir, host);
    const env = {
      ...process.env,
      DOVE_USER: opts.user,
      DOVE_PASS: opts.pass,
      DOVE_CERT: served.cert,
      DOVE_KEY: served.key,
      DOVE_PORT: String(port),
      DOVE_ADDR: host,
      DOVE_IMAP_CAPABILITY: opts.imapCapability ?? '',
    };
    await run('bash', [script, dir, 'start'], { env });
  } catch (err) {
    await run('bash', [script, dir, 'stop']).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    const e = err as { stderr?: string; message: string };
    throw new Error(`dovecot did not start: ${e.stderr || e.message}`);
  }
  let stopped = false;
  const conf = join(dir, 'dovecot.conf');
  const doveadm = async (...args: string[]) => (await run('doveadm', ['-c', conf, ...args])).stdout;
  return {
    host,
    port,
    user: opts.user,
    pass: opts.pass,
    caPath,
    dir,
    doveadm,
    async sessions() {
      // "username # proto (pids) (ips)" then one line per user with its session count.
      return (await doveadm('who'))
        .split('\n')
        .slice(1)
        .reduce((n, line) => n + (Number(line.trim().split(/\s+/)[1]) || 0), 0);
    },
    async pause() {
      // Login and session processes outlive their master (an open connection would go on being
      // served): end every process of this instance, found by its working directory, first, so
      // the connections drop at once (a client streaming a mailbox could otherwise finish it
      // while the stop script runs), then stop the master, then end what is left.
      const killAll = () => {
        for (const pid of processesUnder(dir)) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {}
        }
      };
      killAll();
      await run('bash', [script, dir, 'stop']).catch(() => undefined);
      killAll();
      const deadline = Date.now() + 10_000;
      while (processesUnder(dir).length > 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
    },
    async resume() {
      // The daemon must not inherit pipes (a caller reading them would wait forever).
      await new Promise<void>((resolvePromise, reject) => {
        const p = spawn('dovecot', ['-c', conf], { stdio: 'ignore' });
        p.on('error', reject);
        p.on('exit', (code) => (code === 0 ? resolvePromise() : reject(new Error(`dovecot exited ${code}`))));
      });
      const deadline = Date.now() + 20_000;
      while (!(await isListening(port, host))) {
        if (Date.now() > deadline) throw new Error(`dovecot did not listen again on ${host}:${port}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await run('bash', [script, dir, 'stop']);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function seedMaildir(maildir: string, user: string, messages: number | DovecotMessage[]): void {
  const list: DovecotMessage[] =
    typeof messages === 'number'
      ? Array.from({ length: messages }, (_, i) => generated(i, messages, user))
      : messages;
  list.forEach((m, i) => {
    const folder = !m.folder || m.folder.toUpperCase() === 'INBOX' ? maildir : join(maildir, `.${m.folder}`);
    for (const sub of ['cur', 'new', 'tmp']) mkdirSync(join(folder, sub), { recursive: true });
    const body = Buffer.from(m.raw.replace(/\r?\n/g, '\r\n'));
    const date = m.date ?? new Date();
    const ts = Math.floor(date.getTime() / 1000);
    const base = `${ts}.M${i}P${process.pid}.mailyard,S=${body.length}`;
    const file = m.seen ? join(folder, 'cur', `${base}:2,S`) : join(folder, 'new', base);
    writeFileSync(file, body);
    utimesSync(file, date, date);
  });
}

function generated(i: number, n: number, user: string): DovecotMessage {
  const span = 365 * 86_400_000;
  const date = new Date(Date.now() - span + Math.floor((span * i) / Math.max(n, 1)));
  const raw = [
    `From: Sender ${i % 7} <sender${i % 7}@example.org>`,
    `To: ${user}`,
    `Subject: Test message ${String(i).padStart(6, '0')}`,
    `Date: ${date.toUTCString()}`,
    `Message-ID: <seed-${String(i).padStart(6, '0')}@example.org>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    `Body of message ${i}.`,
    '',
  ].join('\r\n');
  return { raw, date, seen: i < n / 10 };
}

const DIR_PREFIX = 'mailyard-dovecot-';

/** Stops Dovecots this peer started for test processes that have died (killed runs), by their pid files. */
async function reapStale(): Promise<void> {
  for (const entry of readdirSync(tmpdir())) {
    if (!entry.startsWith(DIR_PREFIX)) continue;
    const dir = join(tmpdir(), entry);
    let owner = Number.NaN;
    try {
      owner = Number(readFileSync(join(dir, 'owner.pid'), 'utf8'));
    } catch {}
    if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) continue;
    await run('bash', [join(SCRIPT_DIR, 'dovecot-up.sh'), dir, 'stop']).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Pids of processes whose working directory is `dir` or below it (Dovecot's run dir, homes). */
function processesUnder(dir: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cwd = readlinkSync(join('/proc', entry, 'cwd'));
      if (cwd === dir || cwd.startsWith(`${dir}/`)) out.push(Number(entry));
    } catch {}
  }
  return out;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isListening(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolvePromise(true);
    });
    socket.once('error', () => resolvePromise(false));
  });
}
