/**
 * SparkPost's answers to a transmission, read once (docs/providers.md "SparkPost client"): the
 * status and error body of the Transmissions API become the provider error classes every caller
 * already reads through `classifyProviderFailure` (provider-failure.ts), so the send service
 * words them like Gmail's and Graph's:
 *
 * - 401, 403: the API key is refused (revoked, wrong account, missing Transmissions: Read/Write
 *   permission): `ProviderAuthError`; the send service deactivates the mailer
 *   (`provider_auth_error`).
 * - 429, 5xx, no answer, timeout, connection failure: `ProviderThrottledError` (a failed attempt,
 *   retried on the send schedule, not before SparkPost's Retry-After).
 * - other statuses (400, 404, 413, 422, ...): `ProviderRequestError`, final, carrying SparkPost's
 *   own error text (`errors[0].message` and `description`) and code.
 *
 * SparkPost's error body is `{"errors": [{"message", "description"?, "code"?}]}`; a body that is not
 * that shape (a proxy's HTML page) still classifies by status, with `HTTP <status>` as the text.
 * Nothing of the request (the API key) is ever part of a message.
 */
import { ProviderAuthError, ProviderRequestError } from '../api/errors';
import { parseRetryAfter } from '../api/retry-after';
import { ProviderThrottledError } from '../oauth/types';

/** SparkPost's own text of an error answer: `message: description` of each error, and the first code. */
export function sparkPostErrorText(status: number, body: string): { text: string; code: string } {
  let errors: Array<{ message?: unknown; description?: unknown; code?: unknown }> = [];
  try {
    const parsed = JSON.parse(body) as { errors?: unknown };
    if (Array.isArray(parsed?.errors)) errors = parsed.errors.filter((e) => e && typeof e === 'object');
  } catch {
    // Not JSON: the status alone.
  }
  const parts = errors
    .map((e) => {
      const message = typeof e.message === 'string' ? e.message : '';
      const description = typeof e.description === 'string' ? e.description : '';
      return [message, description].filter(Boolean).join(': ');
    })
    .filter(Boolean);
  const first = errors[0]?.code;
  const code = typeof first === 'string' || typeof first === 'number' ? String(first) : '';
  const text = parts.length > 0 ? parts.join('; ') : `HTTP ${status}`;
  return { text: text.slice(0, 1000), code };
}

/** The error of a non-2xx answer of the Transmissions API. */
export function classifySparkPostResponse(
  status: number,
  body: string,
  retryAfter: string | undefined,
  now = Date.now(),
): Error {
  const { text, code } = sparkPostErrorText(status, body);
  const message = `SparkPost ${status}: ${text}`;
  if (status === 401 || status === 403) return new ProviderAuthError(message, status);
  if (status === 429 || status >= 500)
    return new ProviderThrottledError(message, status, parseRetryAfter(retryAfter, now));
  return new ProviderRequestError(message, status, code);
}

/** The error of a request that got no answer (connection refused or reset, TLS, timeout). */
export function sparkPostNoAnswer(err: Error & { code?: string }): ProviderThrottledError {
  const why = err.code ? `${err.code}: ${err.message}` : err.message;
  return new ProviderThrottledError(`SparkPost did not answer: ${why}`, null, null);
}
