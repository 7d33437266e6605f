import { fieldPath } from './messages';

/**
 * Rules every request input obeys before any route sees it (the HTTP kit applies them once, to
 * the JSON body, the query and the path): bounded nesting and value count, and text PostgreSQL
 * and JSON can store: no NUL (`\u0000`, refused by PostgreSQL `text` and `jsonb`) and no lone
 * UTF-16 surrogate (`\ud800` without its pair: not Unicode, refused by `jsonb`). Field schemas
 * then only deal with meaning, never with storability.
 */
export const JSON_INPUT_LIMITS = {
  /** Arrays/objects inside each other; deeper bodies are refused while they stream in. */
  maxDepth: 32,
  /** Values (objects, arrays, members and elements) in one body of an ordinary route. */
  maxValues: 10_000,
  /** Values in one POST /v1/email/send (1000 recipients with their substitutions). */
  maxSendValues: 100_000,
} as const;

/** Texts of the edge checks (docs/api/conventions.md "Requests"). */
export const InputErrorText = {
  tooDeep: (max: number) => `JSON body is nested too deeply (at most ${max} levels)`,
  tooManyValues: (max: number) => `JSON body has too many values (at most ${max})`,
  notUtf8: 'Request body must be UTF-8 encoded JSON',
  unsupportedEncoding: 'Content-Encoding must be gzip, deflate, br or identity',
  undecodable: (encoding: string) => `Request body is not valid ${encoding} data (Content-Encoding)`,
  unsupportedCharset: 'Content-Type charset must be utf-8',
  malformedUrl: 'Malformed URL: invalid percent-encoding',
  urlNul: 'URL path must not contain NUL characters',
  nul: (field: string) => `${field} must not contain NUL characters`,
  loneSurrogate: (field: string) => `${field} must be valid Unicode text (it contains a lone surrogate)`,
  keyNul: (field: string) => `${field} must not have keys containing NUL characters`,
  keyLoneSurrogate: (field: string) => `${field} must not have keys that are invalid Unicode text`,
} as const;

export type UnsafeText = 'nul' | 'surrogate';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** `String.prototype.isWellFormed` (ES2024, native in Node 20) with a regex fallback. */
const isWellFormed: (s: string) => boolean =
  typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function'
    ? (s) => (s as unknown as { isWellFormed(): boolean }).isWellFormed()
    : (s) => !LONE_SURROGATE.test(s);

/** Why `value` cannot be stored as text, or null when it can. */
export function unsafeText(value: string): UnsafeText | null {
  if (value.includes('\u0000')) return 'nul';
  if (!isWellFormed(value)) return 'surrogate';
  return null;
}

/**
 * False when no string or key `JSON.parse(json)` yields can be unsafe text, so findUnsafeText
 * has nothing to find: for JSON text decoded from valid UTF-8 (which holds no surrogate code
 * points) a NUL or a lone surrogate can only come from a `\u` escape, because JSON.parse refuses
 * raw control characters inside strings. A `\\u` (escaped backslash, then `u`) also answers true;
 * it only costs the full walk. The JSON body reader asks this before walking a parsed body.
 */
export function mayHoldUnsafeText(json: string): boolean {
  return json.includes('\\u');
}

/**
 * The message for the first string (or object key) in a parsed JSON value that cannot be
 * stored as text, naming its field (`content[0].value must not contain NUL characters`), or
 * null. Recursive: call it on values whose depth is bounded (JSON_INPUT_LIMITS.maxDepth).
 */
export function findUnsafeText(value: unknown, path: (string | number)[] = []): string | null {
  if (typeof value === 'string') {
    const problem = unsafeText(value);
    if (!problem) return null;
    return problem === 'nul'
      ? InputErrorText.nul(fieldPath(path))
      : InputErrorText.loneSurrogate(fieldPath(path));
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnsafeText(value[i], [...path, i]);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      const problem = unsafeText(key);
      if (problem)
        return problem === 'nul'
          ? InputErrorText.keyNul(fieldPath(path))
          : InputErrorText.keyLoneSurrogate(fieldPath(path));
      const found = findUnsafeText(inner, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}
