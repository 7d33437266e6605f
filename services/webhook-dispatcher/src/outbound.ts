/**
 * The one place the dispatcher gets its outbound connection guard from. Today the pinned lookup
 * of libs/platform (resolve once, refuse private/loopback/link-local/metadata addresses, connect
 * to the checked address); when the project's guarded connect lands, switch this import to its
 * `guardedLookup({ allowPrivate })`. deliver.ts takes the lookup as a dependency.
 */
import { OutboundTargetRefused, type PinnedLookup, pinnedLookup } from '@mailyard/platform';

export type OutboundLookup = PinnedLookup;

export function outboundLookup(allowPrivate: boolean): OutboundLookup {
  return pinnedLookup({ allowPrivate });
}

export function isRefusedTarget(err: unknown): boolean {
  return err instanceof OutboundTargetRefused;
}
