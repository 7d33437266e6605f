/**
 * The one way the project opens a connection to a user-supplied target (docs/architecture.md
 * "Outbound connections"): resolve once with the project's resolver, check every address
 * (guarded-resolve.ts), then connect to the checked addresses only, in order, until one answers
 * within `timeoutMs`. The host name is used only for TLS (SNI and the certificate check).
 *
 * Errors are OutboundTargetError: ETARGET_PRIVATE / ETARGET_UNRESOLVED before anything is
 * connected, ETARGET_CONNECT when no address accepted the connection (its message names the
 * host and port and the system code, never the address), or the TLS error of the handshake
 * (its message, which names the host and the certificate, not the address).
 */
import net from 'node:net';
import tls from 'node:tls';
import {
  type GuardOptions,
  type ResolvedAddress,
  checkAddress,
  normalizeHost,
  resolveGuardedAll,
} from './guarded-resolve';
import { OutboundTargetError } from './outbound-error';

export interface GuardedConnectOptions extends GuardOptions {
  host: string;
  port: number;
  /** TLS from the first byte; `true` = default options (certificate verified against `host`). */
  tls?: boolean | tls.ConnectionOptions;
  /** Whole budget: resolving, every address tried and the TLS handshake. */
  timeoutMs: number;
  /**
   * An address of `host` the caller resolved itself with the project's resolver (MX delivery
   * resolves MX records first); it is checked, and connected to instead of resolving again.
   */
  address?: string;
}

function connectError(host: string, port: number, code: string): OutboundTargetError {
  return new OutboundTargetError('ETARGET_CONNECT', `Could not connect to ${host}:${port} (${code})`, host, {
    temporary: true,
    causeCode: code,
  });
}

/** Replaces any appearance of the resolved addresses in a library message by the host name. */
function hideAddresses(text: string, host: string, addresses: ResolvedAddress[]): string {
  let out = text;
  for (const { address } of addresses) out = out.split(address).join(host);
  return out;
}

function connectOne(target: ResolvedAddress, port: number, ms: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: target.address, port, family: target.family });
    const timer = setTimeout(() => fail(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })), ms);
    const fail = (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.removeListener('connect', ok);
      socket.destroy();
      reject(err);
    };
    const ok = () => {
      clearTimeout(timer);
      socket.removeListener('error', fail);
      resolve(socket);
    };
    socket.once('error', fail);
    socket.once('connect', ok);
  });
}

function handshake(
  socket: net.Socket,
  host: string,
  options: tls.ConnectionOptions,
  ms: number,
  addresses: ResolvedAddress[],
): Promise<tls.TLSSocket> {
  const name = normalizeHost(host);
  return new Promise((resolve, reject) => {
    const secure = tls.connect({
      ...options,
      socket,
      host: name,
      ...(net.isIP(name) || options.servername ? {} : { servername: name }),
    });
    const timer = setTimeout(
      () => fail(Object.assign(new Error('TLS handshake timed out'), { code: 'ETIMEDOUT' })),
      ms,
    );
    const fail = (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      secure.removeListener('secureConnect', ok);
      secure.destroy();
      socket.destroy();
      const shown = new Error(hideAddresses(err.message, host, addresses)) as NodeJS.ErrnoException;
      if (err.code) shown.code = err.code;
      reject(shown);
    };
    const ok = () => {
      clearTimeout(timer);
      secure.removeListener('error', fail);
      resolve(secure);
    };
    secure.once('error', fail);
    secure.once('secureConnect', ok);
  });
}

/** A connected socket to `host:port` at a checked address (TLS when `tls` is set). */
export async function guardedConnect(
  options: GuardedConnectOptions & { tls: true | tls.ConnectionOptions },
): Promise<tls.TLSSocket>;
export async function guardedConnect(options: GuardedConnectOptions): Promise<net.Socket>;
export async function guardedConnect(options: GuardedConnectOptions): Promise<net.Socket | tls.TLSSocket> {
  const { host, port, timeoutMs } = options;
  const deadline = Date.now() + timeoutMs;
  const addresses =
    options.address !== undefined
      ? [checkAddress(host, options.address, options.allowPrivate)]
      : await resolveGuardedAll(host, options);
  let socket: net.Socket | null = null;
  let lastCode = 'ETIMEDOUT';
  for (const [i, target] of addresses.entries()) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    // Each address gets an equal share of what is left, the last one all of it.
    const share =
      i === addresses.length - 1 ? left : Math.max(Math.floor(left / (addresses.length - i)), 250);
    try {
      socket = await connectOne(target, port, share);
      break;
    } catch (err) {
      lastCode = (err as NodeJS.ErrnoException).code ?? 'ECONNECTION';
    }
  }
  if (!socket) throw connectError(host, port, lastCode);
  if (!options.tls) return socket;
  const tlsOptions = options.tls === true ? {} : options.tls;
  return handshake(socket, host, tlsOptions, Math.max(deadline - Date.now(), 1), addresses);
}
