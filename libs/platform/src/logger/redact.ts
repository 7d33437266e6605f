const SECRET_KEY_RE = /pass(word)?|secret|token|authorization|api[-_]?key|private[-_]?key|cookie|credential/i;
export const REDACTED = '[REDACTED]';

/** Deep copy of `value` with every secret-looking key's value replaced. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    out[key] = SECRET_KEY_RE.test(key) && v !== undefined && v !== null ? REDACTED : redact(v, depth + 1);
  }
  return out;
}

/** The URL with its password replaced, for logs, banners and error messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<unparseable URL>';
  }
}
