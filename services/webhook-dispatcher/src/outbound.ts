/**
 * The one place the dispatcher gets its outbound connection guard from: the lookup of
 * libs/platform's net module (resolve once, refuse private/loopback/link-local/metadata
 * addresses, connect to the checked address: `pinnedLookup` is the platform's `guardedLookup`).
 * deliver.ts takes the guard as a dependency.
 */
import {
  type DnsConfig,
  type PinnedLookup,
  isPrivateTargetError,
  isUnresolvedTargetError,
  pinnedLookup,
  refuseLiteralHost,
} from '@mailyard/platform';

export type OutboundLookup = PinnedLookup;

export interface OutboundGuard {
  allowPrivate: boolean;
  /** dns.lookup-compatible: resolves, refuses private addresses, pins the checked one. */
  lookup: OutboundLookup;
}

export function outboundGuard(allowPrivate: boolean, dns?: DnsConfig): OutboundGuard {
  return { allowPrivate, lookup: pinnedLookup({ allowPrivate, dns }) };
}

/** Node skips `lookup` for IP-literal hosts: the refusal for a private literal, else null. */
export function refuseLiteral(guard: OutboundGuard, hostname: string): Error | null {
  return refuseLiteralHost(hostname, { allowPrivate: guard.allowPrivate });
}

export const isRefusedTarget = isPrivateTargetError;
export const isUnresolvedTarget = isUnresolvedTargetError;
