/**
 * The guarded connect for HTTP(S) clients (webhook deliveries, any HTTP call to a user-supplied
 * URL):
 *
 * - `guardedAgent({ https, allowPrivate, dns })`: an http.Agent / https.Agent whose every
 *   connection goes through guardedConnect (resolve once, check, connect to the checked address;
 *   TLS verified against the URL's host). IP-literal URLs are checked too, so there is nothing
 *   for the caller to remember. Works for node:http and for `got` (`agent: { http, https }`).
 * - `guardedRequest(url, options, agents)`: node's http(s).request for `url` through the guarded
 *   agent of its protocol. Services send HTTP through it (test/layering.test.ts holds that they
 *   call no http(s).request of their own); it refuses an agent that guardedAgent did not make.
 *
 * Redirects are the client's business: a client following them would connect to a new host
 * through the same agent (still checked), but webhooks must not follow them at all.
 */
import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import type tls from 'node:tls';
import { guardedConnect } from './guarded-connect';
import type { GuardOptions } from './guarded-resolve';

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

/** The agents guardedAgent made, the only ones guardedRequest sends through. */
const GUARDED = new WeakSet<http.Agent>();

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
  const secure = options.https;
  // https.Agent is an http.Agent: one subclass of the protocol's agent class serves both.
  const Base: typeof http.Agent = secure ? https.Agent : http.Agent;
  const agent = new (class extends Base {
    override createConnection(o: ConnectOptions, cb: CreateCallback): undefined {
      connect(o, cb, secure);
      return undefined;
    }
  })(options.agent);
  GUARDED.add(agent);
  return agent;
}

/** One guarded agent per protocol (the shape `got` takes as `agent`). */
export interface GuardedAgents {
  http: http.Agent;
  https: http.Agent;
}

/** The http: and https: agents of one guard. */
export function guardedAgents(options: Omit<GuardedAgentOptions, 'https'>): GuardedAgents {
  return {
    http: guardedAgent({ ...options, https: false }),
    https: guardedAgent({ ...options, https: true }),
  };
}

/**
 * node's http(s).request for an http: or https: `url`, through the guarded agent of its
 * protocol; throws (as node's request does for a bad method or header) before anything is sent.
 */
export function guardedRequest(
  url: URL,
  options: Omit<http.RequestOptions, 'agent' | 'lookup' | 'createConnection'>,
  agents: GuardedAgents,
): http.ClientRequest {
  const secure = url.protocol === 'https:';
  const agent = secure ? agents.https : agents.http;
  if (!GUARDED.has(agent) || secure !== agent instanceof https.Agent)
    throw new TypeError(`guardedRequest needs the ${url.protocol} agent of guardedAgent`);
  return (secure ? https.request : http.request)(url, { ...options, agent });
}
