/**
 * How a job walks its window (pure): newest first, in time slices of `sliceMs` from the window's
 * end back to its start, so a `count` cap takes the newest messages and an abort is seen at the
 * next slice. Progress is time-based (docs/api/backfill.md: `percent` over the requested
 * window): the share of the window already walked. Bounds are inclusive, in whole seconds.
 *
 * The slice length adapts to the mailbox (nextSliceMs): a slice that held few messages makes
 * the next one longer, one that held many makes it shorter, between the configured length and a
 * tenth of the window (so PROGRESS still comes about every 10%). Each slice costs a few round
 * trips and a pipeline flush; sparse slices would otherwise dominate a large import.
 */

export interface Slice {
  /** Inclusive. */
  since: Date;
  /** Inclusive. */
  until: Date;
}

/** The slice that ends at `until` (inclusive) and does not go below `start`. */
export function sliceEndingAt(until: Date, start: Date, sliceMs: number): Slice {
  const since = new Date(Math.max(start.getTime(), until.getTime() - sliceMs + 1000));
  return { since, until };
}

/** The upper bound of the slice after `s` (one second below it), null when the window is done. */
export function nextUntil(s: Slice, start: Date): Date | null {
  const next = s.since.getTime() - 1000;
  return next < start.getTime() ? null : new Date(next);
}

/** Time-based percent of the window walked once everything from `cursor` up to `end` is done. */
export function windowPercent(start: Date, end: Date, cursor: Date): number {
  const span = end.getTime() - start.getTime();
  if (span <= 0) return 100;
  const walked = end.getTime() - cursor.getTime();
  return Math.max(0, Math.min(100, Math.floor((walked / span) * 100)));
}

/** True when progress moved into a new 10% step since the last PROGRESS event (0..100 -> 0..10). */
export function progressStep(percent: number): number {
  return Math.floor(Math.max(0, Math.min(100, percent)) / 10);
}

/** Newest first; equal times by id, highest first (IMAP: the newest UID). */
export function newestFirst<T extends { receivedAt: Date; id: string }>(refs: T[]): T[] {
  return [...refs].sort((a, b) => b.receivedAt.getTime() - a.receivedAt.getTime() || compareIds(b.id, a.id));
}

/** Ids in order: decimal ids (IMAP UIDs) by value, others (Gmail hex, Graph) as text. */
export function compareIds(a: string, b: string): number {
  const numeric = /^\d+$/;
  if (numeric.test(a) && numeric.test(b) && a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The next slice length after one that held `found` messages: doubled while under `target`,
 * halved above twice `target`, kept within [minMs, maxMs].
 */
export function nextSliceMs(
  currentMs: number,
  found: number,
  o: { minMs: number; maxMs: number; target: number },
): number {
  const next = found < o.target ? currentMs * 2 : found > 2 * o.target ? currentMs / 2 : currentMs;
  return Math.round(Math.max(o.minMs, Math.min(Math.max(o.minMs, o.maxMs), next)));
}

/** The longest slice of a window: a tenth of it (PROGRESS about every 10%), at least `minMs`. */
export function maxSliceMs(start: Date, end: Date, minMs: number): number {
  return Math.max(minMs, Math.floor((end.getTime() - start.getTime()) / 10000) * 1000);
}
