/**
 * nodemailer's MimeNode normalizes a header name (drop what a field name cannot hold, Camel-Case
 * it, the MIME/DKIM/-ID exceptions) with a chain of regular expressions on every setHeader,
 * getHeader and buildHeaders call: about a tenth of the CPU of building a small message (bench
 * send profile), for the same dozen names every time. `memoizeHeaderKeys()` wraps its own
 * `_normalizeHeaderKey` in a bounded cache: a pure function of the name (it reads nothing else,
 * not even `this`), so every result is the one nodemailer computes, only not computed again.
 * Names beyond the bound (tenants' custom headers) are computed as before.
 */
import MimeNode from 'nodemailer/lib/mime-node';

export const MAX_CACHED_KEYS = 1000;

type Normalize = (this: unknown, key: unknown) => string;
const proto = MimeNode.prototype as unknown as { _normalizeHeaderKey: Normalize & { memoized?: true } };

export function memoizeHeaderKeys(): void {
  if (proto._normalizeHeaderKey.memoized) return;
  const original = proto._normalizeHeaderKey;
  const cache = new Map<string, string>();
  const memoized: Normalize & { memoized?: true } = function (this: unknown, key: unknown) {
    if (typeof key !== 'string') return original.call(this, key);
    let normalized = cache.get(key);
    if (normalized === undefined) {
      normalized = original.call(this, key);
      if (cache.size < MAX_CACHED_KEYS) cache.set(key, normalized);
    }
    return normalized;
  };
  memoized.memoized = true;
  proto._normalizeHeaderKey = memoized;
}
