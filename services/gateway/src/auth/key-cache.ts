import type { KeyOwner } from '@mailyard/store';

/**
 * Short-lived cache of key lookups so an authenticated request costs no database round trip.
 * A revoked key keeps working on another replica for at most `ttlMs` (API_KEY_CACHE_MS, default
 * 5 s); the replica that revoked it clears its cache at once (keys/routes.ts, admin/routes.ts).
 */
export class KeyCache {
  private readonly entries = new Map<string, { owner: KeyOwner | null; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(hash: string): KeyOwner | null | undefined {
    const e = this.entries.get(hash);
    if (!e) return undefined;
    if (e.expiresAt <= Date.now()) {
      this.entries.delete(hash);
      return undefined;
    }
    return e.owner;
  }

  set(hash: string, owner: KeyOwner | null): void {
    if (this.ttlMs <= 0) return;
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(hash, { owner, expiresAt: Date.now() + this.ttlMs });
  }

  clear(): void {
    this.entries.clear();
  }
}
