/**
 * A raw SMTP client session over TCP for the MX tests that behave like an attacker (slow,
 * endless, malformed) where swaks cannot: replies as they arrive, lines and raw bytes sent as
 * the test decides, from a chosen loopback address (so per-address limits can be exercised).
 */
import { type Socket, connect } from 'node:net';

export interface SmtpSession {
  socket: Socket;
  /** Resolves with the next complete reply (its last line), e.g. `220 ...` or `421 ...`. */
  reply(): Promise<string>;
  /** Sends `line` and CRLF. */
  send(line: string): void;
  /** Writes `data` as it is, waiting for the socket to drain when its buffer is full. */
  write(data: Buffer | string): Promise<void>;
  /** Sends each line and expects its reply to match, in order; returns the replies. */
  exchange(steps: Array<[line: string, reply: RegExp]>): Promise<string[]>;
  closed: Promise<void>;
  close(): Promise<void>;
}

export function openSession(port: number, localAddress = '127.0.0.1'): Promise<SmtpSession> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress });
    let buffer = '';
    const replies: string[] = [];
    const waiting: Array<(r: string) => void> = [];
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.on('data', (d: Buffer) => {
      buffer += d.toString('latin1');
      for (let i = buffer.indexOf('\r\n'); i >= 0; i = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        if (/^\d{3} /.test(line)) {
          const w = waiting.shift();
          if (w) w(line);
          else replies.push(line);
        }
      }
    });
    socket.on('error', () => {});
    const reply = () =>
      new Promise<string>((r, j) => {
        const ready = replies.shift();
        if (ready) return r(ready);
        waiting.push(r);
        void closed.then(() => j(new Error('connection closed before a reply')));
      });
    const session: SmtpSession = {
      socket,
      reply,
      send: (line) => {
        socket.write(`${line}\r\n`);
      },
      write: (data) =>
        new Promise((r, j) => {
          if (socket.destroyed) return j(new Error('connection closed'));
          if (socket.write(data)) return r();
          const done = () => {
            socket.off('close', done);
            socket.off('drain', done);
            socket.destroyed ? j(new Error('connection closed')) : r();
          };
          socket.once('drain', done);
          socket.once('close', done);
        }),
      async exchange(steps) {
        const out: string[] = [];
        for (const [line, expected] of steps) {
          session.send(line);
          const r = await reply();
          if (!expected.test(r)) throw new Error(`${line} -> ${r}, expected ${expected}`);
          out.push(r);
        }
        return out;
      },
      closed,
      close: async () => {
        socket.end();
        await closed;
      },
    };
    socket.once('connect', () => resolve(session));
    socket.once('error', reject);
  });
}

/**
 * A session from `ip` greeted (220) and taken through EHLO, MAIL FROM (no SIZE=) and RCPT TO
 * each of `to` up to the 354 of DATA; the message is the caller's to send (or not).
 */
export async function openInData(port: number, to: string[], ip = '127.0.0.1'): Promise<SmtpSession> {
  const s = await openSession(port, ip);
  const greeting = await s.reply();
  if (!greeting.startsWith('220 ')) throw new Error(`greeting: ${greeting}`);
  await s.exchange([
    ['EHLO client.example.org', /^250 /],
    ['MAIL FROM:<a@client.example.org>', /^250 /],
    ...to.map((r): [string, RegExp] => [`RCPT TO:<${r}>`, /^250 /]),
    ['DATA', /^354 /],
  ]);
  return s;
}
