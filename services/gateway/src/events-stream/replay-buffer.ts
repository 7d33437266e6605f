/**
 * The last N events a gateway process streamed, for Last-Event-ID resumes: a fixed-size ring
 * (the oldest overwritten), looked up by event id. Bounded on purpose: a resume reaches only as
 * far back as the ring, and only while the process was subscribed (docs/api/events-stream.md
 * "Resuming"); webhooks and GET /v1/email/logs are the complete record.
 */
export interface ReplayEntry {
  id: string;
  tenantId: string;
}

export class ReplayBuffer<T extends ReplayEntry> {
  private readonly ring: (T | undefined)[];
  private next = 0;
  private size = 0;
  private readonly index = new Map<string, number>();

  constructor(readonly capacity: number) {
    this.ring = new Array(Math.max(0, capacity));
  }

  push(entry: T): void {
    if (this.capacity === 0) return;
    const old = this.ring[this.next];
    if (old && this.index.get(old.id) === this.next) this.index.delete(old.id);
    this.ring[this.next] = entry;
    this.index.set(entry.id, this.next);
    this.next = (this.next + 1) % this.capacity;
    if (this.size < this.capacity) this.size++;
  }

  /**
   * The entries of `tenantId` recorded after the one with id `afterId`, oldest first; null when
   * that id is not (or no longer) in the ring. Another tenant's id reads as not found.
   */
  after(afterId: string, tenantId: string): T[] | null {
    const at = this.index.get(afterId);
    if (at === undefined || this.ring[at]?.tenantId !== tenantId) return null;
    const out: T[] = [];
    const oldest = (this.next - this.size + this.capacity) % this.capacity;
    const skip = (at - oldest + this.capacity) % this.capacity;
    for (let i = skip + 1; i < this.size; i++) {
      const e = this.ring[(oldest + i) % this.capacity]!;
      if (e.tenantId === tenantId) out.push(e);
    }
    return out;
  }

  clear(): void {
    this.ring.fill(undefined);
    this.index.clear();
    this.next = 0;
    this.size = 0;
  }
}
