/**
 * Every connection to a tenant's IMAP server is made here (history backfill, live sync, the
 * gateway's login check), so each gets the same bounds:
 *
 * - the guarded connect (docs/architecture.md, security 3): the host is resolved once and checked
 *   (resolveGuarded: OutboundTargetError for private or unresolvable targets unless
 *   MAILER_ALLOW_PRIVATE_HOSTS), imapflow connects to that address with the host name as TLS
 *   server name, so the certificate is checked against the name; implicit TLS only;
 * - imapflow's parser bounds (limits.ts): no literal, line or response larger than the caller
 *   reads; a server that sends one loses the connection, and `failureOf` reports that bound;
 * - time: connect and greeting within `timeoutMs` (imapflow), socket silence within
 *   `socketTimeoutMs` (imapflow), the whole login within three times `timeoutMs` and any other
 *   command within what the caller gives `within` (deadline.ts: on expiry the connection is
 *   closed).
 *
 * imapflow is loaded on first use (lazy-sdks.ts): processes that never reach an IMAP server do
 * not evaluate it. `failureOf(err)` is how every caller reads a failure on the connection: the
 * one IMAP classifier (classify-imap-error.ts) over the broken parser bound when there is one,
 * with the resolved address replaced by the host name (tenants see the host only).
 */
import { isIP } from 'node:net';
import { type GuardOptions, normalizeHost, resolveGuarded } from '@mailyard/platform';
import type { ImapFlow } from 'imapflow';
import { loadImapFlow } from '../lazy-sdks';
import { type ImapFailure, classifyImapError } from './classify-imap-error';
import { withDeadline } from './deadline';
import { imapParserLimits, isImapLimitError } from './limits';

export interface ImapServer {
  host: string;
  port: number;
  username: string;
  password: string;
}

export interface ImapConnectOptions {
  guard: GuardOptions;
  /** Connect and greeting timeout; the whole login gets three times it. */
  timeoutMs: number;
  /** Socket silence before the connection is dropped. */
  socketTimeoutMs: number;
  /** The largest message read on this connection; null: a login check (no mailbox opened). */
  maxMessageBytes: number | null;
}

export interface ImapConnection {
  readonly client: ImapFlow;
  /** The checked address the host resolved to (not for tenants' eyes). */
  readonly address: string;
  /** Connects, reads the greeting and logs in, within three times `timeoutMs`. */
  login(): Promise<void>;
  /** `work` (a command of `client`) within `ms`, else ImapDeadlineError and the connection closed. */
  within<T>(work: Promise<T>, ms: number, what: string): Promise<T>;
  /**
   * What `err` (thrown by a command of this connection) means, naming the host, never the
   * address. When the server broke a parser bound (imapflow reports it as an 'error' event and
   * closes; the command in flight sees only the connection gone), that bound is the failure.
   */
  failureOf(err: unknown): ImapFailure;
}

/** How long a login may take in all (connect, greeting, capabilities, authentication). */
export const imapLoginDeadlineMs = (timeoutMs: number) => timeoutMs * 3;

export async function openImapConnection(
  server: ImapServer,
  opts: ImapConnectOptions,
): Promise<ImapConnection> {
  const { address } = await resolveGuarded(server.host, opts.guard);
  const name = normalizeHost(server.host);
  const { ImapFlow } = await loadImapFlow();
  const client = new ImapFlow({
    host: address,
    ...(isIP(name) ? {} : { servername: name }),
    port: server.port,
    secure: true,
    auth: { user: server.username, pass: server.password },
    logger: false,
    connectionTimeout: opts.timeoutMs,
    greetingTimeout: opts.timeoutMs,
    socketTimeout: opts.socketTimeoutMs,
    disableAutoIdle: true,
    ...(opts.maxMessageBytes === null ? { verifyOnly: true } : {}),
    ...imapParserLimits(opts.maxMessageBytes),
  });
  let limit: (Error & { code: string }) | null = null;
  // Late socket errors must not become unhandled 'error' events; the next command reports them.
  client.on('error', (err: unknown) => {
    if (!limit && isImapLimitError(err)) limit = err;
  });
  const within = <T>(work: Promise<T>, ms: number, what: string) =>
    withDeadline(work, ms, what, () => client.close());
  return {
    client,
    address,
    login: () => within(client.connect(), imapLoginDeadlineMs(opts.timeoutMs), 'login'),
    within,
    failureOf: (err) => {
      // A bound the server broke ended the connection; the command in flight only saw it gone.
      const failure = classifyImapError(limit ?? err);
      const hide = (text: string) => text.split(address).join(server.host);
      return { ...failure, message: hide(failure.message), text: hide(failure.text) };
    },
  };
}
