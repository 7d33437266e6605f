/**
 * A small pool of nodemailer SMTPConnections to one destination. The send service hands over
 * messages that are already built and signed, so nodemailer's Mail layer (plugins, message
 * objects, stream pipelines) is pure overhead there: going to SMTPConnection directly costs about
 * a quarter of the CPU per message (the send notes in bench/history/).
 *
 * - Up to `maxConnections` connections, each sending one message at a time; extra sends wait.
 * - A connection is logged in (when credentials are given and the server offers AUTH) once, then
 *   reused; after a refused message it is RSET and reused; after a connection-level error it is
 *   dropped. Idle connections close after `idleTimeoutMs`.
 * - A send that fails on a *reused* connection before the server answered anything (it closed
 *   the idle connection meanwhile) is tried once more on a new connection.
 * - Every send has an overall deadline (queueing included); when it passes the connection is
 *   closed and the send fails with ETIMEDOUT.
 * - With `connect`, every connection's socket comes from it (the guarded connect: resolved once,
 *   checked, connected to the checked address); nodemailer then only speaks SMTP over it, with
 *   `host` as the TLS server name. Its errors (OutboundTargetError) are the send's error.
 * - With `source`, a message is handed to the data stream as `source(raw)` returns it (the send
 *   service slices large messages so dot-stuffing does not hold the event loop); it is called
 *   anew for every try, since a stream is consumed once.
 */
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import SMTPConnection, { type SMTPConnectionOptions } from 'nodemailer/lib/smtp-connection';

export interface SmtpPoolOptions extends SMTPConnectionOptions {
  /** Opens the TCP connection of a new SMTP connection (plain; TLS is nodemailer's). */
  connect?: (timeoutMs: number) => Promise<Socket>;
  auth?: { user: string; pass: string };
  maxConnections: number;
  idleTimeoutMs?: number;
  deliveryTimeoutMs: number;
  /** The message as the data stream takes it; default: `raw` itself in one write. */
  source?: (raw: Buffer) => Buffer | Readable;
}

export interface SmtpSendInfo {
  accepted: string[];
  rejected: string[];
  rejectedErrors?: Array<
    Error & { recipient?: string; responseCode?: number; response?: string; command?: string }
  >;
  response: string;
}

interface Conn {
  smtp: SMTPConnection;
  alive: boolean;
  messages: number;
  idleTimer: NodeJS.Timeout | null;
}

interface Waiter {
  grant: (conn: Conn | null) => void;
}

type SmtpError = Error & { code?: string; responseCode?: number; response?: string; command?: string };

const CONNECTION_LEVEL = new Set(['ECONNECTION', 'ESOCKET', 'ETIMEDOUT', 'EPROTOCOL']);

function timeoutError(ms: number): SmtpError {
  const err: SmtpError = new Error(`Delivery did not finish within ${ms} ms`);
  err.code = 'ETIMEDOUT';
  return err;
}

/**
 * A small message as the pipe source nodemailer's send() accepts (it calls `pipe()` once the
 * server answered DATA): the message and the terminating dot are written while the socket is
 * corked, so they leave in one write instead of two (a system call per message: they cost
 * more than the dot-stuffing itself on a busy machine). Uncorked at the next turn of the loop,
 * after the stream's end has pushed the dot.
 */
function inOneWrite(smtp: SMTPConnection, raw: Buffer): Readable {
  const source = {
    on: () => source,
    once: () => source,
    removeListener: () => source,
    destroy: () => source,
    pipe(stream: NodeJS.WritableStream) {
      // The socket the data stream writes to (after STARTTLS, the TLS socket).
      const socket = (smtp as unknown as { _socket?: Socket })._socket;
      socket?.cork();
      stream.write(raw);
      stream.end();
      if (socket) setImmediate(() => socket.uncork());
      return stream;
    },
  };
  return source as unknown as Readable;
}

export class SmtpPool {
  private readonly idle: Conn[] = [];
  private readonly waiters: Waiter[] = [];
  private total = 0;
  private closed = false;

  constructor(private readonly o: SmtpPoolOptions) {}

  /**
   * Sends `raw` to the envelope; rejects with nodemailer's SMTP errors. `cap` (epoch ms)
   * shortens the pool's own delivery deadline, e.g. to what is left of a caller's total budget.
   */
  async send(
    envelope: { from: string; to: string[] },
    raw: Buffer,
    cap = Number.POSITIVE_INFINITY,
  ): Promise<SmtpSendInfo> {
    const deadline = Math.min(cap, Date.now() + this.o.deliveryTimeoutMs);
    const first = await this.acquire(deadline);
    // Read before sending: sendOn counts the message on the connection even when it fails.
    const reused = first.messages > 0;
    try {
      return await this.sendOn(first, envelope, raw, deadline);
    } catch (err) {
      const e = err as SmtpError;
      const staleReuse =
        reused && !e.responseCode && CONNECTION_LEVEL.has(e.code ?? '') && Date.now() < deadline;
      if (!staleReuse) throw err;
      // The server dropped a connection that sat idle: once more, on a new connection.
      const fresh = await this.acquire(deadline, true);
      return this.sendOn(fresh, envelope, raw, deadline);
    }
  }

  close(): void {
    this.closed = true;
    for (const c of this.idle.splice(0)) this.drop(c, true);
    for (const w of this.waiters.splice(0)) w.grant(null);
  }

  private sendOn(
    conn: Conn,
    envelope: { from: string; to: string[] },
    raw: Buffer,
    deadline: number,
  ): Promise<SmtpSendInfo> {
    return new Promise<SmtpSendInfo>((resolve, reject) => {
      let timedOut = false;
      const timer = setTimeout(
        () => {
          timedOut = true;
          this.drop(conn, false);
          reject(timeoutError(this.o.deliveryTimeoutMs));
        },
        Math.max(1, deadline - Date.now()),
      );
      const message = this.o.source ? this.o.source(raw) : raw;
      conn.smtp.send(
        envelope,
        Buffer.isBuffer(message) ? inOneWrite(conn.smtp, message) : message,
        (err, info) => {
          clearTimeout(timer);
          conn.messages++;
          if (timedOut) return;
          if (!err) {
            this.release(conn);
            resolve(info as unknown as SmtpSendInfo);
            return;
          }
          const e = err as SmtpError;
          if ((e.code === 'EENVELOPE' || e.code === 'EMESSAGE') && e.responseCode !== 421 && conn.alive) {
            // The server refused this message; the session is fine once reset.
            conn.smtp.reset((resetErr) => {
              if (resetErr) this.drop(conn, false);
              else this.release(conn);
            });
          } else {
            this.drop(conn, false);
          }
          reject(err);
        },
      );
    });
  }

  /** An idle connection, a new one, or the next one released (null when closed or too late). */
  private acquire(deadline: number, forceNew = false): Promise<Conn> {
    if (this.closed) return Promise.reject(new Error('SMTP pool is closed'));
    if (!forceNew) {
      const conn = this.idle.pop();
      if (conn) {
        if (conn.idleTimer) clearTimeout(conn.idleTimer);
        conn.idleTimer = null;
        return Promise.resolve(conn);
      }
    }
    if (this.total < this.o.maxConnections || forceNew) return this.open(deadline);
    return new Promise<Conn>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(timeoutError(this.o.deliveryTimeoutMs));
        },
        Math.max(1, deadline - Date.now()),
      );
      const waiter: Waiter = {
        grant: (conn) => {
          clearTimeout(timer);
          if (conn) resolve(conn);
          else if (this.closed) reject(new Error('SMTP pool is closed'));
          else this.open(deadline).then(resolve, reject);
        },
      };
      this.waiters.push(waiter);
    });
  }

  private async open(deadline: number): Promise<Conn> {
    this.total++;
    const {
      connect,
      auth,
      maxConnections: _m,
      idleTimeoutMs: _i,
      deliveryTimeoutMs: _d,
      source: _s,
      ...options
    } = this.o;
    let socket: Socket | undefined;
    if (connect) {
      try {
        const budget = Math.max(1, Math.min(deadline - Date.now(), options.connectionTimeout ?? 30_000));
        socket = await connect(budget);
      } catch (err) {
        this.forgetSlot();
        throw err;
      }
      if (this.closed) {
        socket.destroy();
        this.forgetSlot();
        throw new Error('SMTP pool is closed');
      }
    }
    return this.handshake(
      new SMTPConnection(socket ? { ...options, connection: socket } : options),
      auth,
      deadline,
    );
  }

  private handshake(smtp: SMTPConnection, auth: SmtpPoolOptions['auth'], deadline: number): Promise<Conn> {
    const conn: Conn = { smtp, alive: true, messages: 0, idleTimer: null };
    const gone = () => {
      if (!conn.alive) return;
      conn.alive = false;
      this.forget(conn);
    };
    smtp.on('error', gone);
    smtp.once('end', gone);
    return new Promise<Conn>((resolve, reject) => {
      let settled = false;
      const fail = (err: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.drop(conn, false);
        reject(err);
      };
      const timer = setTimeout(
        () => fail(timeoutError(this.o.deliveryTimeoutMs)),
        Math.max(1, deadline - Date.now()),
      );
      smtp.once('error', fail);
      smtp.connect(() => {
        const ready = () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          smtp.removeListener('error', fail);
          resolve(conn);
        };
        if (auth && smtp.allowsAuth) smtp.login(auth, (err) => (err ? fail(err) : ready()));
        else ready();
      });
    });
  }

  private release(conn: Conn): void {
    if (!conn.alive) return;
    const waiter = this.waiters.shift();
    if (waiter) {
      waiter.grant(conn);
      return;
    }
    if (this.closed) {
      this.drop(conn, true);
      return;
    }
    conn.idleTimer = setTimeout(() => this.drop(conn, true), this.o.idleTimeoutMs ?? 30_000);
    conn.idleTimer.unref();
    this.idle.push(conn);
  }

  /** Closes a connection (QUIT when it is idle and healthy) and lets a waiter open another. */
  private drop(conn: Conn, polite: boolean): void {
    if (conn.idleTimer) clearTimeout(conn.idleTimer);
    conn.idleTimer = null;
    const wasAlive = conn.alive;
    conn.alive = false;
    if (polite && wasAlive) conn.smtp.quit();
    else conn.smtp.close();
    if (wasAlive) this.forget(conn);
  }

  private forget(conn: Conn): void {
    const i = this.idle.indexOf(conn);
    if (i >= 0) this.idle.splice(i, 1);
    this.forgetSlot();
  }

  /** A connection slot is free again (its connection ended, or it never got a socket). */
  private forgetSlot(): void {
    this.total = Math.max(0, this.total - 1);
    // A slot is free: the next waiter opens a connection of its own.
    const waiter = this.waiters.shift();
    if (waiter) waiter.grant(null);
  }
}
