/**
 * Which rows of one UID FETCH are handed on. The server decides what it answers: unsolicited
 * rows are legal (another session changed a flag), and a hostile server sends rows of UIDs
 * nobody asked for (hoping they get posted), a UID twice, or rows without the items asked for,
 * and can go on forever. Only the first complete row of each requested UID is taken; every other
 * row is a stray, ignored and counted; more than `maxStrays` (the requested count plus
 * STRAY_ALLOWANCE) means the server is flooding the command rather than answering it.
 */
export const STRAY_ALLOWANCE = 1000;

export type RowVerdict = 'take' | 'stray' | 'flood';

export class RequestedRows {
  private readonly waiting: Set<number>;
  readonly maxStrays: number;
  private strayCount = 0;

  constructor(uids: readonly number[]) {
    this.waiting = new Set(uids);
    this.maxStrays = this.waiting.size + STRAY_ALLOWANCE;
  }

  /** `complete`: the row carries every item the caller needs (a source, a date). */
  accept(uid: number | undefined, complete: boolean): RowVerdict {
    if (uid !== undefined && complete && this.waiting.delete(uid)) return 'take';
    this.strayCount++;
    return this.strayCount > this.maxStrays ? 'flood' : 'stray';
  }

  /** Rows ignored so far. */
  get strays(): number {
    return this.strayCount;
  }
}
