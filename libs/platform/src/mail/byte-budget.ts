/**
 * A count of bytes held against a fixed limit, shared by every session of one MX server
 * (INBOUND_MAX_INFLIGHT_BYTES): message-reader.ts reserves each chunk of DATA before it holds
 * it and gives the reservation back when the message is stored, refused or dropped. A
 * reservation that would pass the limit is refused whole (nothing is held past it). `peak` is
 * the most ever held at once; `onChange` keeps the `mailyard_inbound_held_bytes` gauge.
 */
export class ByteBudget {
  private current = 0;
  private highest = 0;

  /** `onChange` is told every change of `held` (the gauge). */
  constructor(
    readonly limit: number,
    private readonly onChange: (delta: number) => void = () => {},
  ) {}

  /** Holds `bytes` more if that stays within the limit; false (nothing held) otherwise. */
  tryReserve(bytes: number): boolean {
    if (this.current + bytes > this.limit) return false;
    this.current += bytes;
    if (this.current > this.highest) this.highest = this.current;
    this.onChange(bytes);
    return true;
  }

  release(bytes: number): void {
    const freed = Math.min(bytes, this.current);
    this.current -= freed;
    if (freed > 0) this.onChange(-freed);
  }

  get held(): number {
    return this.current;
  }

  get peak(): number {
    return this.highest;
  }
}
