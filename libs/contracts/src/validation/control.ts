/**
 * Control characters that must never reach a message header: C0 (CR, LF, TAB, NUL, ...), DEL,
 * C1, and the Unicode line/paragraph separators. Any of them in a header-bound field is a 400.
 */
export function hasControlChars(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x2028 || c === 0x2029) return true;
  }
  return false;
}
