/**
 * The browser twin of random-uuid.ts (package.json `browser` field): Web Crypto's randomUUID,
 * or, outside a secure context (plain http on a LAN name, where randomUUID is absent), a v4 UUID
 * built from getRandomValues, which every context has.
 */
export function randomUUID(): string {
  const c = globalThis.crypto;
  if (typeof c.randomUUID === 'function') return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
