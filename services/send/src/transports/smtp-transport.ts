/**
 * smtp / basic_smtp mailers: their configured server, authenticated with the mailer's
 * credentials. `secure`: Auto = STARTTLS when offered; Tls = STARTTLS required; SSL = TLS from
 * the start; None = plain, STARTTLS ignored. Certificates are verified (the credentials travel
 * over that channel). One pool per mailer configuration; a changed configuration (or password)
 * gets a new pool. Connections go through the guarded connect (MAILER_ALLOW_PRIVATE_HOSTS): the
 * host is resolved with the project's resolver for each new connection, refused when it is or
 * resolves to a non-public address, and the checked address is the one connected to; the host
 * name is the TLS server name.
 */
import type { SmtpSecureMode } from '@mailyard/contracts';
import { type GuardOptions, guardedConnect, normalizeHost } from '@mailyard/platform';
import {
  type Envelope,
  type PoolCache,
  type RecipientResult,
  settingsKey,
  smtpTlsOptions,
} from '@mailyard/providers';
import type { MessageTransport } from './types';

export interface SmtpServerSettings {
  host: string;
  port: number;
  secure: SmtpSecureMode;
  username: string;
  password: string;
}

export class SmtpMailerTransport implements MessageTransport {
  constructor(
    private readonly pools: PoolCache,
    private readonly mailerId: string,
    private readonly server: SmtpServerSettings,
    private readonly o: {
      timeoutMs: number;
      maxConnections: number;
      clientName: string;
      /** MAILER_ALLOW_PRIVATE_HOSTS and the project's resolver (DNS_SERVERS). */
      guard: GuardOptions;
    },
  ) {}

  deliver(envelope: Envelope, raw: Buffer): Promise<RecipientResult[]> {
    const s = this.server;
    const key = `mailer:${this.mailerId}:${settingsKey([s.host, s.port, s.secure, s.username, s.password])}`;
    const transporter = this.pools.get(key, () => ({
      // Every new connection resolves the host again and is refused if it now points inward.
      connect: (timeoutMs) => guardedConnect({ ...this.o.guard, host: s.host, port: s.port, timeoutMs }),
      host: normalizeHost(s.host),
      port: s.port,
      ...smtpTlsOptions(s.secure),
      ...(s.username ? { auth: { user: s.username, pass: s.password } } : {}),
      name: this.o.clientName,
      maxConnections: this.o.maxConnections,
      connectionTimeout: this.o.timeoutMs,
      greetingTimeout: this.o.timeoutMs,
      socketTimeout: this.o.timeoutMs,
    }));
    return this.pools.send(transporter, envelope, raw);
  }
}
