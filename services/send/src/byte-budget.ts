/**
 * A semaphore counted in bytes: bounds the memory of copies being built and delivered at once
 * (SEND_INFLIGHT_BYTES) instead of their number. SEND_CONCURRENCY commands may be in flight, but
 * a copy only renders, builds, signs and delivers once its estimated size fits in what the
 * copies ahead of it left; waiters are served first come, first served, so a large copy is not
 * starved by small ones. A copy larger than the whole budget runs alone.
 */
export class ByteBudget {
  private used = 0;
  private readonly waiters: Array<{ bytes: number; grant: () => void }> = [];

  constructor(readonly capacity: number) {}

  /** Bytes held by running copies. */
  get inUse(): number {
    return this.used;
  }

  /** Copies waiting for room. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** Waits until `bytes` fit, takes them, and returns the function that gives them back. */
  async acquire(bytes: number): Promise<() => void> {
    const n = Math.min(this.capacity, Math.max(1, Math.ceil(bytes)));
    if (this.waiters.length === 0 && this.used + n <= this.capacity) {
      this.used += n;
    } else {
      await new Promise<void>((grant) => this.waiters.push({ bytes: n, grant }));
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= n;
      this.drain();
    };
  }

  private drain(): void {
    while (this.waiters.length > 0 && this.used + this.waiters[0]!.bytes <= this.capacity) {
      const w = this.waiters.shift()!;
      this.used += w.bytes;
      w.grant();
    }
  }
}

/**
 * Estimated peak bytes of one copy in flight, from the size of its stored request (JSON text:
 * bodies plus base64 attachments): the rendered bodies, the built message and its DKIM-signed
 * copy, and the chunks of the build, about three times the request, plus a little overhead.
 * The request itself and its encoded attachments are shared by the copies of a send and are not
 * counted per copy.
 */
export function copyCostBytes(requestBytes: number): number {
  return 3 * requestBytes + 64 * 1024;
}
