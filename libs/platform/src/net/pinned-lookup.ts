/**
 * The guard in the shape node's http/net `lookup` option and IP-literal checks want, for HTTP
 * clients (webhook registration checks and deliveries): `pinnedLookup` is `guardedLookup`
 * (resolve once with the project's resolver, refuse private/loopback/link-local/metadata
 * addresses, hand node the checked address to connect to). Node never calls `lookup` for an
 * IP-literal host, so callers check literals with `refuseLiteralHost` first.
 */
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { guardedLookup } from './guarded-http';
import { type GuardOptions, checkAddress, normalizeHost } from './guarded-resolve';
import { type OutboundTargetError, isOutboundTargetError } from './outbound-error';

export type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

export type PinnedLookup = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

export function pinnedLookup(opts: GuardOptions): PinnedLookup {
  return guardedLookup(opts);
}

/** The refusal for a private IP-literal host (node skips `lookup` for literals), else null. */
export function refuseLiteralHost(hostname: string, opts: GuardOptions): OutboundTargetError | null {
  const host = normalizeHost(hostname);
  if (opts.allowPrivate || isIP(host) === 0) return null;
  try {
    checkAddress(hostname, host, false);
    return null;
  } catch (err) {
    if (isOutboundTargetError(err)) return err;
    throw err;
  }
}

export const isPrivateTargetError = (err: unknown): boolean =>
  isOutboundTargetError(err) && err.code === 'ETARGET_PRIVATE';

export const isUnresolvedTargetError = (err: unknown): boolean =>
  (isOutboundTargetError(err) && err.code === 'ETARGET_UNRESOLVED') ||
  ['ENOTFOUND', 'EAI_AGAIN', 'ENODATA'].includes(String((err as NodeJS.ErrnoException | null)?.code));
