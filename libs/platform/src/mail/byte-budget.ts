/**
 * A count of bytes held against a fixed limit: the one bound on memory held by work in flight.
 * Two ways to take bytes:
 * - `tryReserve` (the MX, INBOUND_MAX_INFLIGHT_BYTES: message-reader.ts reserves each chunk of
 *   DATA before it holds it and gives it back when the message is stored, refused or dropped):
 *   a reservation that would pass the limit, or that would overtake a waiter, is refused whole.
 * - `acquire` (the send service, SEND_INFLIGHT_BYTES and its copy slots): waits until the bytes
 *   fit, first come first served, so a large copy is not starved by small ones; a request
 *   larger than the whole limit runs alone. It returns the release, which gives back once.
 * `peak` is the most ever held at once; `onChange` is told every change (the gauges).
 */
export class ByteBudget {
  private current = 0;
  private highest = 0;
  private readonly waiters: Array<{ bytes: number; grant: () => void }> = [];

  constructor(
    readonly limit: number,
    private readonly onChange: (delta: number) => void = () => {},
  ) {}

  /** Holds `bytes` more if that stays within the limit and no one waits; false (nothing held) otherwise. */
  tryReserve(bytes: number): boolean {
    if (this.waiters.length > 0 || this.current + bytes > this.limit) return false;
    this.hold(bytes);
    return true;
  }

  /** Waits until `bytes` fit (in arrival order), holds them, and returns the function that gives them back. */
  async acquire(bytes: number): Promise<() => void> {
    const n = Math.min(this.limit, Math.max(1, Math.ceil(bytes)));
    if (this.waiters.length === 0 && this.current + n <= this.limit) this.hold(n);
    else await new Promise<void>((grant) => this.waiters.push({ bytes: n, grant }));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release(n);
    };
  }

  release(bytes: number): void {
    const freed = Math.min(bytes, this.current);
    this.current -= freed;
    if (freed > 0) this.onChange(-freed);
    while (this.waiters.length > 0 && this.current + this.waiters[0]!.bytes <= this.limit) {
      const w = this.waiters.shift()!;
      this.hold(w.bytes);
      w.grant();
    }
  }

  get held(): number {
    return this.current;
  }

  get peak(): number {
    return this.highest;
  }

  /** Requests waiting for room (`acquire`). */
  get waiting(): number {
    return this.waiters.length;
  }

  private hold(bytes: number): void {
    this.current += bytes;
    if (this.current > this.highest) this.highest = this.current;
    this.onChange(bytes);
  }
}
