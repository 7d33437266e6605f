/**
 * A hostile IMAP server for tests: what a tenant could point a mailer at. IMAPS on port 993 of a
 * loopback alias of its own (implicit TLS, a leaf certificate from the test CA, like the Dovecot
 * peer: basic IMAP connects to port 993 with SSL only), a few lines over node:tls. It logs any
 * user in and serves an INBOX of `messages` small messages (UID n received n hours ago,
 * `Subject: hostile-<n>`, `Message-ID: <hostile-<n>@hostile.test>`), answering LIST, SELECT /
 * EXAMINE, UID SEARCH (everything; `UID a:*` honoured), UID FETCH (INTERNALDATE, RFC822.SIZE,
 * BODY[] with a partial range honoured), NOOP, IDLE and LOGOUT, until the command its `attack`
 * names, which it answers like this:
 *
 * - `huge-literal`: a literal of `announce` bytes (`* 1 FETCH (UID u BODY[] {announce}` on a
 *   source FETCH, `* CAPABILITY {announce}` after LOGIN), then filler bytes as fast as the client
 *   reads them (socket backpressure), until the client goes away: never the whole literal.
 * - `unrequested-uids`: every requested message twice, and `extra` messages of UIDs nobody asked
 *   for (UIDs from 1000, with sources and dates inside any window), then the tagged OK.
 * - `endless-fetch`: the requested messages, then untagged FETCH responses of UIDs nobody asked
 *   for (with sources on a source FETCH) forever; never the tagged OK.
 * - `endless-untagged`: the requested messages (none after LOGIN), then `* OK` lines forever;
 *   never the tagged OK. Only a deadline stops it (no FETCH to count).
 * - `big-message`: an honest server whose message `uid` is `bytes` long; its RFC822.SIZE says so,
 *   or (`lie: true`) says it is small. A partial FETCH gets what it asked for.
 *
 * `on` picks the command: `login` (the answer to LOGIN), `listing` (a UID FETCH without BODY[]:
 * dates and sizes) or `source` (a UID FETCH of BODY[]). The server writes only while the client
 * reads (it never buffers what the client does not take), so `bytesSent()` is an upper bound of
 * what a client received: a client that stops reading a huge literal caps it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TLSSocket, createServer } from 'node:tls';
import { listenOnLoopbackAlias } from '../process';
import { leafCertificate, trustedTestCa } from './test-ca';

export type HostileImapAttack =
  | { kind: 'huge-literal'; on: 'login' | 'source'; announce: number }
  | { kind: 'unrequested-uids'; on: 'listing' | 'source'; extra: number }
  | { kind: 'endless-fetch'; on: 'listing' | 'source' }
  | { kind: 'endless-untagged'; on: 'login' | 'listing' | 'source' }
  | { kind: 'big-message'; uid: number; bytes: number; lie: boolean };

export interface HostileImapOptions {
  attack: HostileImapAttack;
  /** INBOX messages, UIDs 1..n (default 3). */
  messages?: number;
}

export interface HostileImap {
  host: string;
  port: number;
  /** Bytes written to clients so far (all connections). */
  bytesSent(): number;
  /** Connections accepted so far. */
  connections(): number;
  /** Connections open now. */
  open(): number;
  /** The attack's answers begun so far (a client that reconnects meets it again). */
  attacks(): number;
  stop(): Promise<void>;
}

const FILLER = Buffer.alloc(64 * 1024, 'A');
const STRAY_UID = 1000;
/** A message sequence number for a UID (strays reuse the real ones: servers may). */
const seqOf = (uid: number) => uid % STRAY_UID || 1;

export async function startHostileImap(opts: HostileImapOptions): Promise<HostileImap> {
  await trustedTestCa('hostile IMAP peer');
  const count = opts.messages ?? 3;
  const attack = opts.attack;
  const now = Date.now();
  let sent = 0;
  let accepted = 0;
  let attacks = 0;
  const sockets = new Set<TLSSocket>();

  const message = (uid: number): Buffer => {
    const big = attack.kind === 'big-message' && attack.uid === uid ? attack.bytes : 0;
    const head = [
      'From: Someone <someone@hostile.test>',
      'To: owner@mailbox.test',
      `Subject: hostile-${uid}`,
      `Date: ${dateOf(uid).toUTCString()}`,
      `Message-ID: <hostile-${uid}@hostile.test>`,
      'Content-Type: text/plain; charset=utf-8',
      '',
      `Body of hostile-${uid}.`,
      '',
    ].join('\r\n');
    return big > head.length
      ? Buffer.concat([Buffer.from(head), Buffer.alloc(big - head.length, 'B')])
      : Buffer.from(head);
  };
  const dateOf = (uid: number) =>
    new Date(Math.floor(now / 1000) * 1000 - (uid % STRAY_UID) * 3_600_000 - 60_000);
  const sizeOf = (uid: number) =>
    attack.kind === 'big-message' && attack.lie && attack.uid === uid ? 100 : message(uid).length;

  const server = createServer({}, (socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    const write = (data: string | Buffer): Promise<void> => {
      if (socket.destroyed) return Promise.reject(new Error('closed'));
      sent += typeof data === 'string' ? Buffer.byteLength(data) : data.length;
      if (socket.write(data)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const done = () => {
          socket.off('drain', done);
          socket.off('close', done);
          socket.destroyed ? reject(new Error('closed')) : resolve();
        };
        socket.on('drain', done);
        socket.on('close', done);
      });
    };
    /** Runs an endless answer until the client goes away. */
    const forever = async (next: (k: number) => string | Buffer) => {
      attacks++;
      for (let k = 0; ; k++) {
        await write(next(k));
        if (k % 256 === 0) await new Promise((r) => setImmediate(r));
      }
    };
    const fetchLine = (uid: number, items: FetchItems): Buffer => {
      const parts = [`UID ${uid}`];
      if (items.internalDate) parts.push(`INTERNALDATE "${imapDate(dateOf(uid))}"`);
      if (items.size) parts.push(`RFC822.SIZE ${sizeOf(uid)}`);
      if (!items.source) return Buffer.from(`* ${seqOf(uid)} FETCH (${parts.join(' ')})\r\n`);
      let body = message(uid);
      if (items.partial) body = body.subarray(items.partial[0], items.partial[0] + items.partial[1]);
      const key = items.partial ? `BODY[]<${items.partial[0]}>` : 'BODY[]';
      return Buffer.concat([
        Buffer.from(`* ${seqOf(uid)} FETCH (${parts.join(' ')} ${key} {${body.length}}\r\n`),
        body,
        Buffer.from(')\r\n'),
      ]);
    };

    const onFetch = async (tag: string, set: string, items: FetchItems) => {
      const uids = parseUidSet(set, count);
      const phase = items.source ? 'source' : 'listing';
      const hit = 'on' in attack && attack.on === phase;
      if (hit && attack.kind === 'huge-literal') {
        attacks++;
        await write(`* 1 FETCH (UID ${uids[0] ?? 1} BODY[] {${attack.announce}}\r\n`);
        for (;;) await write(FILLER);
      }
      for (const uid of uids) await write(fetchLine(uid, items));
      if (hit && attack.kind === 'unrequested-uids') {
        attacks++;
        for (const uid of uids) await write(fetchLine(uid, items));
        for (let k = 0; k < attack.extra; k++) await write(fetchLine(STRAY_UID + k, items));
      }
      if (hit && attack.kind === 'endless-fetch') await forever((k) => fetchLine(STRAY_UID + k, items));
      if (hit && attack.kind === 'endless-untagged') await forever((k) => `* OK still working ${k}\r\n`);
      await write(`${tag} OK FETCH completed\r\n`);
    };

    const onLine = async (line: string) => {
      const m = /^(\S+) (?:UID )?(\S+)(?: (.*))?$/i.exec(line);
      if (!m) return write('* BAD what\r\n');
      const [, tag, verb, args = ''] = m as unknown as [string, string, string, string];
      const uidCommand = /^\S+ UID /i.test(line);
      switch (verb.toUpperCase()) {
        case 'CAPABILITY':
          return write(`* CAPABILITY IMAP4rev1 IDLE\r\n${tag} OK done\r\n`);
        case 'LOGIN':
          if ('on' in attack && attack.on === 'login') {
            if (attack.kind === 'huge-literal') {
              attacks++;
              await write(`* CAPABILITY {${attack.announce}}\r\n`);
              for (;;) await write(FILLER);
            }
            if (attack.kind === 'endless-untagged') await forever((k) => `* OK still working ${k}\r\n`);
          }
          return write(`${tag} OK [CAPABILITY IMAP4rev1 IDLE] logged in\r\n`);
        case 'LIST':
          return write(`* LIST (\\HasNoChildren) "/" INBOX\r\n${tag} OK LIST done\r\n`);
        case 'LSUB':
          return write(`* LSUB (\\HasNoChildren) "/" INBOX\r\n${tag} OK LSUB done\r\n`);
        case 'SELECT':
        case 'EXAMINE':
          return write(
            `* ${count} EXISTS\r\n* 0 RECENT\r\n* FLAGS (\\Seen)\r\n* OK [UIDVALIDITY 7] ok\r\n* OK [UIDNEXT ${count + 1}] ok\r\n${tag} OK [READ-ONLY] selected\r\n`,
          );
        case 'SEARCH': {
          const from = /UID (\d+):\*/i.exec(args);
          const all = Array.from({ length: count }, (_, i) => i + 1).filter(
            (u) => !from || u >= Number(from[1]),
          );
          return write(`* SEARCH${all.map((u) => ` ${u}`).join('')}\r\n${tag} OK SEARCH done\r\n`);
        }
        case 'FETCH': {
          if (!uidCommand) return write(`${tag} BAD UID FETCH only\r\n`);
          const [set = '', ...rest] = args.split(' ');
          const what = rest.join(' ').toUpperCase();
          const partial = /BODY\.PEEK\[\]<(\d+)\.(\d+)>/.exec(what);
          return onFetch(tag, set, {
            internalDate: what.includes('INTERNALDATE'),
            size: what.includes('RFC822.SIZE'),
            source: /BODY(\.PEEK)?\[\]/.test(what),
            partial: partial ? [Number(partial[1]), Number(partial[2])] : null,
          });
        }
        case 'IDLE':
          return write('+ idling\r\n');
        case 'DONE':
          return write(`${idleTag ?? '*'} OK IDLE done\r\n`);
        case 'LOGOUT':
          await write(`* BYE bye\r\n${tag} OK LOGOUT done\r\n`);
          socket.end();
          return;
        case 'NOOP':
        case 'ID':
        case 'ENABLE':
        case 'CLOSE':
        case 'UNSELECT':
          return write(`${tag} OK ${verb} done\r\n`);
        default:
          return write(`${tag} BAD unknown command\r\n`);
      }
    };

    let idleTag: string | null = null;
    let buffered = '';
    let queue: Promise<void> = write('* OK [CAPABILITY IMAP4rev1 IDLE] hostile IMAP ready\r\n').catch(
      () => {},
    );
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      for (let at = buffered.indexOf('\r\n'); at >= 0; at = buffered.indexOf('\r\n')) {
        const line = buffered.slice(0, at);
        buffered = buffered.slice(at + 2);
        if (/^\S+ IDLE$/i.test(line)) idleTag = line.split(' ')[0]!;
        const run = line.toUpperCase() === 'DONE' ? `${idleTag ?? '*'} DONE` : line;
        queue = queue.then(() => onLine(run)).catch(() => {});
      }
    });
  });

  const host = await listenOnLoopbackAlias(server, 993);
  const dir = mkdtempSync(join(tmpdir(), 'mailyard-hostile-imap-'));
  try {
    const leaf = await leafCertificate(dir, host);
    server.setSecureContext({ cert: readFileSync(leaf.cert), key: readFileSync(leaf.key) });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    host,
    port: 993,
    bytesSent: () => sent,
    connections: () => accepted,
    open: () => sockets.size,
    attacks: () => attacks,
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

interface FetchItems {
  internalDate: boolean;
  size: boolean;
  source: boolean;
  partial: [number, number] | null;
}

/** The UIDs of `set` (`1:3,5`, `4:*`) among 1..count. */
function parseUidSet(set: string, count: number): number[] {
  const out: number[] = [];
  for (const part of set.split(',')) {
    const [a, b] = part.split(':');
    const lo = Number(a === '*' ? count : a);
    const hi = b === undefined ? lo : Number(b === '*' ? count : b);
    for (let u = Math.min(lo, hi); u <= Math.max(lo, hi) && u <= count; u++) out.push(u);
  }
  return out;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** IMAP INTERNALDATE: `17-Jul-1996 02:44:25 +0000`. */
function imapDate(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getUTCDate())}-${MONTHS[d.getUTCMonth()]}-${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
}
