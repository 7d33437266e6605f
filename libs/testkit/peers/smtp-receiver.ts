import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';

/** One message as the receiver got it. */
export interface ReceivedMessage {
  from: string;
  /** Envelope recipients (RCPT TO) the receiver accepted. */
  to: string[];
  raw: Buffer;
  /** The authenticated user, if the client logged in. */
  user?: string;
  /** True when the session was encrypted (STARTTLS or implicit TLS). */
  secure: boolean;
}

/** An SMTP reply the receiver answers with instead of accepting: `[code, text]`. */
export type Reply = [number, string];

export interface SmtpReceiverOptions {
  /** Port on 127.0.0.1 (default: a free one). */
  port?: number;
  /** Rejects a recipient (RCPT TO) by returning a reply. */
  onRcpt?: (address: string) => Reply | undefined;
  /** Rejects a message after its data by returning a reply; `n` counts DATA commands from 1. */
  onData?: (message: ReceivedMessage, n: number) => Reply | undefined;
  /** Require AUTH with these credentials, or reject every login with 535. */
  auth?: { user: string; pass: string } | 'reject';
  /** Offer STARTTLS (smtp-server's built-in self-signed certificate). Default off. */
  starttls?: boolean;
  /** Wait this long before answering each DATA (a slow server). */
  dataDelayMs?: number;
  /**
   * Answer no DATA until `bodies` message bodies (counted since the start) have arrived, or `maxMs`
   * passed: deliveries that must overlap (a race a test needs) are made to, instead of hoping a
   * fixed delay is long enough.
   */
  holdData?: { bodies: number; maxMs: number };
  /** Close client connections idle for this long (default: smtp-server's 60 s). */
  idleTimeoutMs?: number;
}

export interface SmtpReceiver {
  port: number;
  /** Messages accepted so far (250 after DATA). */
  messages: ReceivedMessage[];
  /** DATA commands seen so far, accepted or not. */
  dataCount(): number;
  /** Login attempts seen so far. */
  authAttempts(): number;
  /** SMTP connections (sessions) opened so far. */
  connections(): number;
  /** SMTP connections closed so far (by either side). */
  closedConnections(): number;
  /** TCP connections accepted so far, counted before any SMTP (a client that hangs up at once counts too). */
  tcpConnections(): number;
  /** Resolves once at least `n` messages were accepted. */
  waitForMessages(n: number, timeoutMs?: number): Promise<ReceivedMessage[]>;
  close(): Promise<void>;
}

function smtpError(reply: Reply): Error {
  const err = new Error(reply[1]) as Error & { responseCode: number };
  err.responseCode = reply[0];
  return err;
}

/**
 * A real SMTP server (the `smtp-server` package) on 127.0.0.1 that records what it receives,
 * with optional behaviors: reject recipients, reject messages (e.g. 4xx then 250), require or
 * refuse AUTH, offer STARTTLS.
 */
export async function startSmtpReceiver(opts: SmtpReceiverOptions = {}): Promise<SmtpReceiver> {
  const messages: ReceivedMessage[] = [];
  let data = 0;
  let logins = 0;
  let sessions = 0;
  let closed = 0;
  let bodies = 0;
  const bodyWaiters = new Set<() => void>();
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((w) => w());
  const auth = opts.auth;

  const server = new SMTPServer({
    logger: false,
    banner: 'mailyard test receiver',
    hideSTARTTLS: !opts.starttls,
    allowInsecureAuth: true,
    authOptional: auth === undefined,
    ...(auth === undefined ? { disabledCommands: ['AUTH'] } : {}),
    size: 50 * 1024 * 1024,
    ...(opts.idleTimeoutMs ? { socketTimeout: opts.idleTimeoutMs } : {}),
    onConnect(_session, callback) {
      sessions++;
      callback();
    },
    onClose() {
      closed++;
    },
    onAuth(a, _session, callback) {
      logins++;
      if (auth !== 'reject' && auth && a.username === auth.user && a.password === auth.pass) {
        callback(null, { user: a.username });
        return;
      }
      const err = smtpError([535, '5.7.8 Authentication credentials invalid']);
      callback(err);
    },
    onRcptTo(address: SMTPServerAddress, _session: SMTPServerSession, callback) {
      const reply = opts.onRcpt?.(address.address);
      callback(reply ? smtpError(reply) : undefined);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', async () => {
        bodies++;
        bodyWaiters.forEach((w) => w());
        if (opts.holdData) await enoughBodies(opts.holdData);
        if (opts.dataDelayMs) await new Promise((r) => setTimeout(r, opts.dataDelayMs).unref());
        data++;
        const message: ReceivedMessage = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks),
          ...(typeof session.user === 'string' ? { user: session.user } : {}),
          secure: session.secure,
        };
        const reply = opts.onData?.(message, data);
        if (reply) {
          callback(smtpError(reply));
          return;
        }
        messages.push(message);
        notify();
        callback(null);
      });
    },
  });
  function enoughBodies(hold: { bodies: number; maxMs: number }): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        bodyWaiters.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const check = () => {
        if (bodies >= hold.bodies) done();
      };
      const timer = setTimeout(done, hold.maxMs).unref();
      bodyWaiters.add(check);
      check();
    });
  }
  server.on('error', () => {});
  let tcp = 0;
  server.server.on('connection', () => {
    tcp++;
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  return {
    port,
    messages,
    dataCount: () => data,
    authAttempts: () => logins,
    connections: () => sessions,
    closedConnections: () => closed,
    tcpConnections: () => tcp,
    waitForMessages(n, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (messages.length >= n) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(messages);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver got ${messages.length} of ${n} messages within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
