const ALPHABET = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/')
  ALPHABET[c.charCodeAt(0)] = 1;

/** Removes the line breaks and spaces that MIME-style base64 may carry. */
export function stripBase64Whitespace(value: string): string {
  return /[\s]/.test(value) ? value.replace(/[\t\n\r ]+/g, '') : value;
}

/** Strict standard base64 (RFC 4648 section 4) with padding; no whitespace, not base64url. */
export function isBase64(value: string): boolean {
  const n = value.length;
  if (n % 4 !== 0) return false;
  const pad = value.endsWith('==') ? 2 : value.endsWith('=') ? 1 : 0;
  for (let i = 0; i < n - pad; i++) {
    const c = value.charCodeAt(i);
    if (c >= 128 || ALPHABET[c] !== 1) return false;
  }
  return true;
}

/** Bytes that valid base64 decodes to. */
export function decodedBase64Length(value: string): number {
  const pad = value.endsWith('==') ? 2 : value.endsWith('=') ? 1 : 0;
  return (value.length / 4) * 3 - pad;
}
