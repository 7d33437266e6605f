/**
 * Which requests a key's scope allows (docs/api/keys.md "Scopes"): a pure decision over the
 * request's method and path, run by the auth step (api-key-auth.ts) for express's chain and the
 * fast send route alike, before any body is read.
 *
 * - `full`: everything.
 * - `send`: `POST /v1/email/send` and `POST /v1/email/send/{ref_id}/cancel`, nothing else.
 * - `read`: every GET (and HEAD, OPTIONS) route except the key list.
 * - managing keys (`/v1/keys...`, any method) needs `full`.
 *
 * The path is matched as express routes it: case-insensitively, with or without a trailing slash,
 * the query ignored. Anything not named here needs `full`, so a route added later is closed to
 * `send` and `read` keys until this rule says otherwise (GET routes excepted: reading is `read`).
 */
import { ErrorText, type KeyScope } from '@mailyard/contracts';

/** What a request needs: the scope that allows it (besides `full`) and the message when refused. */
export interface ScopeNeed {
  scope: KeyScope;
  refusal: string;
}

const KEYS = /^\/v1\/keys(?:\/|$)/;
const SEND = /^\/v1\/email\/send$/;
const CANCEL = /^\/v1\/email\/send\/[^/]+\/cancel$/;
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The path part of a request URL, as the rule compares it (lowercase, no query, no trailing slash). */
export function rulePath(url: string): string {
  const q = url.indexOf('?');
  const path = (q === -1 ? url : url.slice(0, q)).toLowerCase();
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/** The scope `method url` needs. */
export function scopeNeeded(method: string, url: string): ScopeNeed {
  const path = rulePath(url);
  if (KEYS.test(path)) return { scope: 'full', refusal: ErrorText.scopeManageKeys };
  if (method === 'POST' && (SEND.test(path) || CANCEL.test(path)))
    return { scope: 'send', refusal: ErrorText.scopeSendEmail };
  if (READ_METHODS.has(method)) return { scope: 'read', refusal: ErrorText.scopeReadData };
  return { scope: 'full', refusal: ErrorText.scopeChangeConfiguration };
}

/** Null when a key of `scope` may make this request, else the 403 message. */
export function scopeRefusal(scope: KeyScope, method: string, url: string): string | null {
  if (scope === 'full') return null;
  const need = scopeNeeded(method, url);
  return need.scope === scope ? null : need.refusal;
}
