/**
 * The guarded connect for HTTP(S) clients (webhook deliveries, OAuth endpoints):
 *
 * - `guardedAgent({ https, allowPrivate, dns })`: an http.Agent / https.Agent whose every
 *   connection goes through guardedConnect (resolve once, check, connect to the checked address;
 *   TLS verified against the URL's host). Works for node:http and for `got`
 *   (`agent: { http, https }`). IP-literal URLs are checked too. Prefer it.
 * - `guardedLookup({ allowPrivate, dns })`: a dns.lookup-compatible function (for `lookup` of
 *   node:http / net, or got's `dnsLookup`). Node skips `lookup` for IP-literal hosts, so a
 *   client using only this must check IP literals itself (checkAddress); the agent does.
 *
 * Redirects are the client's business: a client following them would connect to a new host
 * through the same agent (still checked), but webhooks must not follow them at all.
 */
import type { LookupAddress, LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import type tls from 'node:tls';
import { guardedConnect } from './guarded-connect';
import { type GuardOptions, resolveGuardedAll } from './guarded-resolve';

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** A dns.lookup-compatible function that resolves through the guard (see the file comment). */
export function guardedLookup(options: GuardOptions) {
  return (
    hostname: string,
    opts: LookupOptions | number | LookupCallback,
    callback?: LookupCallback,
  ): void => {
    const cb = (typeof opts === 'function' ? opts : callback) as LookupCallback;
    const o: LookupOptions =
      typeof opts === 'number' ? { family: opts } : typeof opts === 'object' ? opts : {};
    resolveGuardedAll(hostname, options).then(
      (all) => {
        const wanted = o.family === 4 || o.family === 6 ? all.filter((a) => a.family === o.family) : all;
        if (wanted.length === 0) {
          const err: NodeJS.ErrnoException = new Error(`${hostname} has no IPv${o.family} address`);
          err.code = 'ENOTFOUND';
          cb(err, '');
          return;
        }
        if (o.all) cb(null, wanted);
        else cb(null, wanted[0]!.address, wanted[0]!.family);
      },
      (err: NodeJS.ErrnoException) => cb(err, ''),
    );
  };
}

export interface GuardedAgentOptions extends GuardOptions {
  /** https.Agent (TLS, certificate checked against the URL host) instead of http.Agent. */
  https: boolean;
  /** Connect budget per connection (resolve + connect + TLS). Default 10 s. */
  connectTimeoutMs?: number;
  agent?: http.AgentOptions & https.AgentOptions;
}

type ConnectOptions = http.ClientRequestArgs &
  tls.ConnectionOptions & { host?: string; port?: number | string };
type CreateCallback = (err: Error | null, socket?: Duplex) => void;

const TLS_KEYS = [
  'ca',
  'cert',
  'key',
  'pfx',
  'passphrase',
  'ciphers',
  'rejectUnauthorized',
  'servername',
  'ALPNProtocols',
  'checkServerIdentity',
  'minVersion',
  'maxVersion',
  'session',
] as const;

/** An http(s) Agent whose connections all go through guardedConnect. */
export function guardedAgent(options: GuardedAgentOptions): http.Agent {
  const guard: GuardOptions = {
    allowPrivate: options.allowPrivate,
    ...(options.dns ? { dns: options.dns } : {}),
  };
  const timeoutMs = options.connectTimeoutMs ?? 10_000;
  const connect = (o: ConnectOptions, cb: CreateCallback, secure: boolean) => {
    const host = String(o.host ?? o.hostname ?? 'localhost');
    const port = Number(o.port ?? (secure ? 443 : 80));
    const tlsOptions: tls.ConnectionOptions = {};
    if (secure)
      for (const k of TLS_KEYS) if (o[k] !== undefined) (tlsOptions as Record<string, unknown>)[k] = o[k];
    guardedConnect({ ...guard, host, port, timeoutMs, ...(secure ? { tls: tlsOptions } : {}) }).then(
      (socket) => cb(null, socket),
      (err: Error) => cb(err),
    );
  };
  if (options.https) {
    return new (class extends https.Agent {
      override createConnection(o: ConnectOptions, cb: CreateCallback): undefined {
        connect(o, cb, true);
        return undefined;
      }
    })(options.agent);
  }
  return new (class extends http.Agent {
    override createConnection(o: ConnectOptions, cb: CreateCallback): undefined {
      connect(o, cb, false);
      return undefined;
    }
  })(options.agent);
}
