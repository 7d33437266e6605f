/**
 * One HTTP request to Microsoft Graph (Node's fetch) and the classification of its failures for
 * the retry policy (api/call-policy.ts), after Graph's "Microsoft Graph error responses" and
 * "throttling guidance":
 *
 * - 401 (InvalidAuthenticationToken): the token was refused.
 * - 429, 503, 504 and other 5xx, no answer, timeout: busy, with Retry-After when sent.
 * - 403: the account may not do this (missing Mail.Send / Mail.Read consent, mailbox disabled),
 *   except ErrorSendAsDenied, which is about the message's From (a ProviderRequestError).
 * - Other statuses: ProviderRequestError with Graph's `error.code` and message (410 and the
 *   delta sync-state codes tell a delta caller to sync again).
 *
 * Links Graph returns (@odata.nextLink, @odata.deltaLink) are followed only on the configured
 * Graph origin and version path, so the bearer token never goes anywhere else.
 */
import { type CallFailure, networkFailure } from '../api/call-policy';
import { ProviderRequestError } from '../api/errors';
import { parseRetryAfter } from '../api/retry-after';

export class GraphHttpError extends Error {
  override name = 'GraphHttpError';
  constructor(
    readonly status: number,
    readonly graphCode: string,
    message: string,
    readonly retryAfterMs: number | null,
  ) {
    super(message);
  }
}

export interface GraphRequest {
  method: 'GET' | 'POST' | 'DELETE';
  url: URL;
  body?: string;
  contentType?: string;
  /** Prefer header preferences (RFC 7240), e.g. `IdType="ImmutableId"`. */
  prefer?: string[];
}

/** Sends one request with `token`; resolves with the response of a 2xx, throws GraphHttpError otherwise. */
export async function graphFetch(req: GraphRequest, token: string, timeoutMs: number): Promise<Response> {
  const headers: Record<string, string> = { Authorization: `Bearer ${token}`, Accept: 'application/json' };
  if (req.contentType) headers['Content-Type'] = req.contentType;
  if (req.prefer?.length) headers.Prefer = req.prefer.join(', ');
  const res = await fetch(req.url, {
    method: req.method,
    headers,
    ...(req.body !== undefined ? { body: req.body } : {}),
    redirect: 'error',
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (res.ok) return res;
  const text = await res.text().catch(() => '');
  let code = '';
  let message = `HTTP ${res.status}`;
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
    code = body.error?.code ?? '';
    message = body.error?.message ?? message;
  } catch {
    if (text.trim()) message = text.trim().slice(0, 300);
  }
  throw new GraphHttpError(res.status, code, message, parseRetryAfter(res.headers.get('retry-after')));
}

/** Error codes that mean a delta link can no longer be used: sync again from the start. */
export const RESYNC_CODES = new Set(['syncStateNotFound', 'syncStateInvalid', 'resyncRequired']);

export function classifyGraphError(err: unknown): CallFailure {
  if (err instanceof GraphHttpError) {
    const { status, graphCode: code } = err;
    const text = code ? `${err.message} (${code})` : err.message;
    if (status === 401) return { kind: 'unauthorized', message: text };
    if (status === 429 || status >= 500)
      return { kind: 'busy', status, retryAfterMs: err.retryAfterMs, message: text };
    if (status === 403 && code !== 'ErrorSendAsDenied') return { kind: 'denied', status, message: text };
    return {
      kind: 'error',
      error: new ProviderRequestError(`Microsoft Graph ${status}: ${err.message}`, status, code),
    };
  }
  if (err instanceof Error) {
    const cause = (err as { cause?: { code?: unknown } }).cause;
    const failure = networkFailure(cause?.code ?? err.name, err.message);
    if (failure) return failure;
    if (err instanceof TypeError && err.message === 'fetch failed')
      return { kind: 'busy', status: null, retryAfterMs: null, message: 'no answer from Microsoft Graph' };
  }
  return { kind: 'error', error: err };
}

/**
 * `link` as a URL when it is on `base`'s origin under its path (…/v1.0/); a link anywhere else is
 * refused rather than sent the token.
 */
export function sameGraphUrl(link: string, base: URL): URL {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    throw new ProviderRequestError(
      `Microsoft Graph returned an invalid link: ${link.slice(0, 200)}`,
      200,
      '',
    );
  }
  if (url.origin !== base.origin || !url.pathname.startsWith(base.pathname))
    throw new ProviderRequestError(`Microsoft Graph returned a link outside ${base.href}`, 200, '');
  return url;
}
