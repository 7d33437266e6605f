import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface SmtpAuthServerOptions {
  user: string;
  pass: string;
  /**
   * `plain`: no TLS at all (STARTTLS not offered); `starttls`: STARTTLS offered with the given
   * certificate; `implicit`: TLS from the first byte (port 465 style).
   */
  tls?: 'plain' | 'starttls' | 'implicit';
  /** PEM certificate and key for `starttls`/`implicit` (e.g. the test CA's). */
  cert?: string;
  key?: string;
}

export interface SmtpAuthServer {
  host: string;
  port: number;
  /** Usernames of every AUTH attempt, with the outcome. */
  attempts: Array<{ username: string; ok: boolean; method: string }>;
  stop(): Promise<void>;
}

/** A real SMTP server (npm smtp-server) on 127.0.0.1:<free port> with AUTH PLAIN/LOGIN for one user. */
export async function startSmtpAuthServer(opts: SmtpAuthServerOptions): Promise<SmtpAuthServer> {
  const tls = opts.tls ?? 'plain';
  const attempts: SmtpAuthServer['attempts'] = [];
  const tlsFiles =
    tls === 'plain'
      ? {}
      : {
          cert: readFileSync(
            opts.cert ??
              (() => {
                throw new Error('cert is required for TLS');
              })(),
          ),
          key: readFileSync(
            opts.key ??
              (() => {
                throw new Error('key is required for TLS');
              })(),
          ),
        };
  const server = new SMTPServer({
    secure: tls === 'implicit',
    ...tlsFiles,
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: tls === 'plain',
    disabledCommands: tls === 'plain' ? ['STARTTLS'] : [],
    logger: false,
    onAuth(auth, _session, callback) {
      const ok = auth.username === opts.user && auth.password === opts.pass;
      attempts.push({ username: auth.username ?? '', ok, method: auth.method });
      if (ok) return callback(null, { user: auth.username });
      const err = new Error('Invalid username or password') as Error & { responseCode: number };
      err.responseCode = 535;
      return callback(err);
    },
    onData(stream, _session, callback) {
      stream.resume();
      stream.on('end', () => callback());
    },
  });
  server.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    server.listen(0, '127.0.0.1', () => resolve());
    server.server.once('error', reject);
  });
  const port = (server.server.address() as AddressInfo).port;
  return {
    host: '127.0.0.1',
    port,
    attempts,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
