/**
 * Domain mailers with SMTP_RELAY_URL set: every message goes to that smarthost over one pool.
 * `smtp://user:pass@host:port` uses STARTTLS when offered (certificate not verified: the relay is
 * the operator's own, often addressed by IP); `smtps://` is TLS from the start and verified.
 * The relay gets every recipient of a copy in one transaction.
 */
import type { DestinationOptions, Envelope, PoolCache, RecipientResult } from '@mailyard/providers';
import type { MessageTransport } from './types';

export interface RelaySettings {
  url: string;
  timeoutMs: number;
  maxConnections: number;
  clientName: string;
}

export function relayPoolOptions(s: RelaySettings): DestinationOptions {
  const u = new URL(s.url);
  const secure = u.protocol === 'smtps:';
  const user = decodeURIComponent(u.username);
  return {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : secure ? 465 : 25,
    secure,
    ...(user ? { auth: { user, pass: decodeURIComponent(u.password) } } : {}),
    tls: secure ? {} : { rejectUnauthorized: false },
    name: s.clientName,
    maxConnections: s.maxConnections,
    connectionTimeout: s.timeoutMs,
    greetingTimeout: s.timeoutMs,
    socketTimeout: s.timeoutMs,
  };
}

export class RelayTransport implements MessageTransport {
  constructor(
    private readonly pools: PoolCache,
    private readonly settings: RelaySettings,
  ) {}

  deliver(envelope: Envelope, raw: Buffer): Promise<RecipientResult[]> {
    const transporter = this.pools.get('relay', () => relayPoolOptions(this.settings));
    return this.pools.send(transporter, envelope, raw);
  }
}
