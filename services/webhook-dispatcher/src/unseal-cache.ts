/**
 * Opened sealed values by their sealed bytes: a webhook's headers and signing secret are
 * unsealed (AES-256-GCM) once, not for every claim. The key is the ciphertext itself, so an
 * update, a rotated secret or new headers (a new seal, a new random IV) is a different entry and
 * nothing is ever stale; the configuration is still read from the database for every claim.
 * At most `maxEntries` are kept (all dropped when full: rotations are rare).
 */
export class UnsealCache {
  private readonly opened = new Map<string, string>();

  constructor(
    private readonly open: (sealed: Uint8Array) => string,
    private readonly maxEntries = 10_000,
  ) {}

  openText(sealed: Uint8Array): string {
    const key = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength).toString('base64');
    let text = this.opened.get(key);
    if (text === undefined) {
      text = this.open(sealed);
      if (this.opened.size >= this.maxEntries) this.opened.clear();
      this.opened.set(key, text);
    }
    return text;
  }

  get size(): number {
    return this.opened.size;
  }
}
