/**
 * The live-sync position of an API mailbox (mailbox-client.ts LivePosition): `validity` is the
 * service name, `lastUid` 0, and `cursor` the client's own JSON (Gmail: history id; Graph: delta
 * link) with `t`, when the round that made it began: mail the cursor has not reported yet was
 * received after `t` (less LIVE_MARGIN_MS for clock skew), which is where a client lists again
 * when the provider no longer knows the cursor (expired history, delta token). Pure.
 */
import type { LivePosition } from '../../mailbox/mailbox-client';

/** How far before `t` a re-listing starts (clock skew, receipt times set before the change). */
export const LIVE_MARGIN_MS = 10 * 60_000;

export function livePosition(service: string, cursor: Record<string, string>): LivePosition {
  return { validity: service, lastUid: 0, cursor: JSON.stringify(cursor) };
}

/**
 * The cursor's fields when `p` is this service's and has every one of `fields` (strings, not
 * empty); else null. Other string fields (optional ones) come along.
 */
export function readLiveCursor<K extends string>(
  p: LivePosition,
  service: string,
  fields: readonly K[],
): (Record<K, string> & Record<string, string | undefined>) | null {
  if (p.validity !== service || !p.cursor) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(p.cursor);
  } catch {
    return null;
  }
  if (!parsed || typeof parsed !== 'object') return null;
  const o = parsed as Record<string, unknown>;
  if (!fields.every((f) => typeof o[f] === 'string' && o[f] !== '')) return null;
  return Object.fromEntries(Object.entries(o).filter(([, v]) => typeof v === 'string')) as Record<K, string> &
    Record<string, string | undefined>;
}

/** Where a re-listing starts: `t` less the margin (the epoch when `t` is unreadable). */
export function relistFrom(t: string): Date {
  const ms = Date.parse(t);
  return new Date(Number.isFinite(ms) ? Math.max(0, ms - LIVE_MARGIN_MS) : 0);
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}
