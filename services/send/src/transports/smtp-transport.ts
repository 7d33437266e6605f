/**
 * smtp / basic_smtp mailers: their configured server, authenticated with the mailer's
 * credentials. `secure`: Auto = STARTTLS when offered; Tls = STARTTLS required; SSL = TLS from
 * the start; None = plain, STARTTLS ignored. Certificates are verified (the credentials travel
 * over that channel). One pool per mailer configuration; a changed configuration (or password)
 * gets a new pool.
 */
import type { SmtpSecureMode } from '@mailyard/contracts';
import { hostRefusal } from '@mailyard/platform';
import { type DestinationOptions, type PoolCache, settingsKey } from './pool-cache';
import type { Envelope, MessageTransport, RecipientResult } from './types';

export interface SmtpServerSettings {
  host: string;
  port: number;
  secure: SmtpSecureMode;
  username: string;
  password: string;
}

export function secureOptions(
  secure: SmtpSecureMode,
): Pick<DestinationOptions, 'secure' | 'requireTLS' | 'ignoreTLS'> {
  switch (secure) {
    case 'SSL':
      return { secure: true };
    case 'Tls':
      return { secure: false, requireTLS: true };
    case 'None':
      return { secure: false, ignoreTLS: true };
    default:
      return { secure: false };
  }
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
      allowPrivateHosts: boolean;
    },
  ) {}

  async deliver(envelope: Envelope, raw: Buffer): Promise<RecipientResult[]> {
    const s = this.server;
    // The gateway refuses such hosts at save time; this catches DNS that changed since.
    const refusal = await cachedRefusal(s.host, this.o.allowPrivateHosts);
    if (refusal) {
      const failure = {
        kind: 'permanent' as const,
        failedReason: 'Mailer host is not allowed',
        providerError: refusal,
      };
      return envelope.to.map((email) => ({ email, ok: false as const, failure }));
    }
    const key = `mailer:${this.mailerId}:${settingsKey([s.host, s.port, s.secure, s.username, s.password])}`;
    const transporter = this.pools.get(key, () => ({
      host: s.host,
      port: s.port,
      ...secureOptions(s.secure),
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

const REFUSAL_TTL_MS = 60_000;
const refusals = new Map<string, { refusal: string | null; at: number }>();

/** hostRefusal with a short cache: one DNS lookup per host a minute, not one per message. */
async function cachedRefusal(host: string, allowPrivate: boolean): Promise<string | null> {
  if (allowPrivate) return null;
  const hit = refusals.get(host);
  if (hit && Date.now() - hit.at < REFUSAL_TTL_MS) return hit.refusal;
  const refusal = await hostRefusal(host, false);
  if (refusals.size > 10_000) refusals.clear();
  refusals.set(host, { refusal, at: Date.now() });
  return refusal;
}
