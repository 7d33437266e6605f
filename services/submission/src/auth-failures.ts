/**
 * Failed AUTH attempts per client address (IPv6 by /64: libs/platform clientKey), counted in the
 * kv store so every replica shares the count: past `limit` failures in a window of `windowMs`
 * the address is refused AUTH (454) until the window ends, so keys cannot be guessed at speed.
 * A kv failure counts nothing and blocks nothing (fail open, as the rate limit).
 */
import type { Kv } from '@mailyard/platform';

export class AuthFailures {
  constructor(
    private readonly kv: Pick<Kv, 'hitWindow' | 'get' | 'set'>,
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  private key = (client: string) => `submission:authfail:${client}`;

  /** Seconds the client is still refused; 0 when it may try. */
  async blockedFor(client: string): Promise<number> {
    try {
      const until = Number((await this.kv.get(`${this.key(client)}:blocked`)) ?? 0);
      const left = Math.ceil((until - Date.now()) / 1000);
      return left > 0 ? left : 0;
    } catch {
      return 0;
    }
  }

  /** Counts one failure; the one that reaches the limit blocks the client to the window's end. */
  async record(client: string): Promise<void> {
    try {
      const hit = await this.kv.hitWindow(this.key(client), this.windowMs);
      if (hit.count >= this.limit) {
        const ttl = Math.max(1000, hit.resetAtMs - Date.now());
        await this.kv.set(`${this.key(client)}:blocked`, String(hit.resetAtMs), ttl);
      }
    } catch {
      // fail open
    }
  }
}
