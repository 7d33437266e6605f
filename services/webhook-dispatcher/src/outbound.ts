/**
 * The one place the dispatcher gets its outbound connection guard from. Today the pinned lookup
 * of libs/platform (resolve once, refuse private/loopback/link-local/metadata addresses, connect
 * to the checked address); when the project's guarded connect lands, switch this import to its
 * `guardedLookup({ allowPrivate })`. deliver.ts takes the lookup as a dependency.
 */
import {
  OutboundTargetRefused,
  type PinnedLookup,
  pinnedLookup,
  refuseLiteralHost,
} from '@mailyard/platform';

export type OutboundLookup = PinnedLookup;

export interface OutboundGuard {
  allowPrivate: boolean;
  /** dns.lookup-compatible: resolves, refuses private addresses, pins the checked one. */
  lookup: OutboundLookup;
}

export function outboundGuard(allowPrivate: boolean): OutboundGuard {
  return { allowPrivate, lookup: pinnedLookup({ allowPrivate }) };
}

/** Node skips `lookup` for IP-literal hosts: the refusal for a private literal, else null. */
export function refuseLiteral(guard: OutboundGuard, hostname: string): Error | null {
  return refuseLiteralHost(hostname, { allowPrivate: guard.allowPrivate });
}

export function isRefusedTarget(err: unknown): boolean {
  return err instanceof OutboundTargetRefused;
}
