/**
 * The WHERE clause of a filtered list query (logs, audit, suppressions, webhook deliveries):
 * every filter is a numbered parameter (never text in the SQL) ANDed to the ones before, the
 * first being the tenant; a time range follows the contracts' TimeBound (a bare end date is
 * exclusive at the next midnight). One builder, so every list reads its filters the same way.
 * `params` and `where` stay open for what a caller appends after the filters (cursor, limit).
 */
import type { TimeBound } from '@mailyard/contracts';

export class SqlFilter {
  readonly params: unknown[] = [];
  readonly where: string[] = [];

  /** Starts with `<column> = $1` (the tenant scope). */
  constructor(column: string, value: unknown) {
    this.add(value, (p) => `${column} = ${p}`);
  }

  /** ANDs `clause($n)` with `value` as parameter $n. */
  add(value: unknown, clause: (p: string) => string): void {
    this.params.push(value);
    this.where.push(clause(`$${this.params.length}`));
  }

  /** ANDs `column` within [start, end], each bound inclusive unless it says exclusive. */
  timeRange(column: string, start: TimeBound | undefined, end: TimeBound | undefined): void {
    if (start) this.add(start.at, (p) => `${column} ${start.exclusive ? '>' : '>='} ${p}::timestamptz`);
    if (end) this.add(end.at, (p) => `${column} ${end.exclusive ? '<' : '<='} ${p}::timestamptz`);
  }

  /** The conditions so far, ANDed. */
  get sql(): string {
    return this.where.join(' AND ');
  }
}
