import { z } from 'zod';

/**
 * The one rule for the custom headers of every webhook kind: tenant webhooks (`headers`), inbound
 * routes (`headers`), IMAP mailers' incoming webhooks (`webhook.headers`) and a delivery's own
 * extra headers on the bus. The API checks it at registration and update (400 with the message);
 * the webhook dispatcher checks the stored headers again before every attempt, so a header stored
 * before this rule existed is a failed attempt that says why, never a request that cannot be built
 * or one that frames a second request. Whatever passes is sent verbatim.
 *
 * - an object of at most 50 entries;
 * - names are HTTP tokens (RFC 9110 `token`) of at most 256 characters, each given once
 *   (case-insensitively);
 * - names the service sets or that frame the request are reserved: Host, Content-Length,
 *   Transfer-Encoding, the other hop-by-hop headers, the Standard Webhooks and trace headers, and
 *   the headers a delivery of the service's own carries (X-History-Backfill-Job-Id: a configured
 *   one would be replaced on backfill deliveries and would mark live ones as backfill). Only the
 *   service's delivery headers themselves (`{ delivery: true }`: the bus message, the dispatcher's
 *   check of a delivery's extra headers) may use those names;
 * - User-Agent is NOT reserved: a custom one replaces ours (Mailyard-Webhooks/1.0), verbatim, as
 *   receivers allow-listing a client by User-Agent need;
 * - values are strings of printable ASCII, spaces and tabs, at most 8192 characters: no CR, LF,
 *   NUL, DEL or other control character, nothing Node's HTTP client refuses to send.
 *
 * The first problem wins; messages name the field as the request wrote it (`headers`,
 * `webhook.headers`) and the header by its name, never its value (often a credential).
 */

export const WEBHOOK_HEADERS_MAX = 50;
export const WEBHOOK_HEADER_NAME_MAX = 256;
export const WEBHOOK_HEADER_VALUE_MAX = 8192;

/** Lower-case names a custom header may not have: the dispatcher sets them, or they frame the request. */
export const RESERVED_WEBHOOK_HEADERS: readonly string[] = [
  'content-type',
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'connection',
  'proxy-connection',
  'host',
  'keep-alive',
  'upgrade',
  'http2-settings',
  'te',
  'trailer',
  'expect',
  'traceparent',
  'tracestate',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'x-history-backfill-job-id',
];

/** The header naming the backfill job on its INCOMING_EMAIL deliveries (spec: "Backfill events"). */
export const HISTORY_BACKFILL_JOB_HEADER = 'X-History-Backfill-Job-Id';

/** Reserved names a delivery of the service's own may carry (checked with `{ delivery: true }`). */
export const SERVICE_DELIVERY_HEADERS: readonly string[] = [HISTORY_BACKFILL_JOB_HEADER.toLowerCase()];

export interface WebhookHeadersOptions {
  /** The headers are the service's own for one delivery (SERVICE_DELIVERY_HEADERS allowed). */
  delivery?: boolean;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const VALUE = /^[\t\x20-\x7E]*$/;

/** The messages, for the field as the request names it. */
export const WebhookHeaderText = {
  invalid: (field: string) => `${field} must be an object of strings`,
  tooMany: (field: string) => `${field} may hold at most ${WEBHOOK_HEADERS_MAX} entries`,
  name: (field: string) =>
    `${field} names must be HTTP header names (at most ${WEBHOOK_HEADER_NAME_MAX} characters)`,
  reserved: (field: string, name: string) => `${field}.${name} cannot be set: the service sets this header`,
  twice: (field: string, name: string) => `${field}.${name} is given twice`,
  /** docs/architecture.md, security 7 (credential-destination.ts): stored headers do not follow a URL to a new origin. */
  neededAgain: (field: string, urlField: string) =>
    `${field} is required when ${urlField} changes scheme, host or port: the stored headers are not sent to a new destination`,
  value: (field: string, name: string) =>
    `${field}.${name} must be a string of printable ASCII characters without control characters (at most ${WEBHOOK_HEADER_VALUE_MAX})`,
} as const;

export type WebhookHeadersCheck =
  | { ok: true; headers: Record<string, string> }
  | { ok: false; error: string };

/** A header name as the rule accepts it (`__proto__` is a token but no object can hold it as a key). */
export const isWebhookHeaderName = (name: string): boolean =>
  name.length <= WEBHOOK_HEADER_NAME_MAX && TOKEN.test(name) && name !== '__proto__';

export const isReservedWebhookHeader = (name: string): boolean =>
  RESERVED_WEBHOOK_HEADERS.includes(name.toLowerCase());

/** Checks `input` as the custom headers named `field`; returns them (a fresh object) or the first problem. */
export function checkWebhookHeaders(
  input: unknown,
  field = 'headers',
  opts: WebhookHeadersOptions = {},
): WebhookHeadersCheck {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return { ok: false, error: WebhookHeaderText.invalid(field) };
  const names = Object.keys(input);
  if (names.length > WEBHOOK_HEADERS_MAX) return { ok: false, error: WebhookHeaderText.tooMany(field) };
  const seen = new Set<string>();
  const out: Array<[string, string]> = [];
  for (const name of names) {
    if (!isWebhookHeaderName(name)) return { ok: false, error: WebhookHeaderText.name(field) };
    if (
      isReservedWebhookHeader(name) &&
      !(opts.delivery && SERVICE_DELIVERY_HEADERS.includes(name.toLowerCase()))
    )
      return { ok: false, error: WebhookHeaderText.reserved(field, name) };
    const lower = name.toLowerCase();
    if (seen.has(lower)) return { ok: false, error: WebhookHeaderText.twice(field, name) };
    seen.add(lower);
    const value = (input as Record<string, unknown>)[name];
    if (typeof value !== 'string' || value.length > WEBHOOK_HEADER_VALUE_MAX || !VALUE.test(value))
      return { ok: false, error: WebhookHeaderText.value(field, name) };
    out.push([name, value]);
  }
  return { ok: true, headers: Object.fromEntries(out) };
}

/**
 * The rule as a zod schema for request and message bodies. It reads the raw input (a zod record
 * would drop a `__proto__` key before any check saw it: accepted, then silently lost); its JSON
 * Schema side (OpenAPI) is an object of strings with the rule as its description.
 */
export function webhookHeadersSchema(field = 'headers', opts: WebhookHeadersOptions = {}) {
  return z
    .preprocess(
      (raw, ctx) => {
        const r = checkWebhookHeaders(raw, field, opts);
        if (r.ok) return r.headers;
        ctx.addIssue({ code: 'custom', message: r.error });
        return z.NEVER;
      },
      // Only ever sees what the check returned: the JSON Schema side of the rule.
      z.record(z.string()),
    )
    .describe(
      `Custom request headers sent verbatim: at most ${WEBHOOK_HEADERS_MAX}; names are HTTP tokens (at most ${WEBHOOK_HEADER_NAME_MAX} characters, each once); values printable ASCII without control characters (at most ${WEBHOOK_HEADER_VALUE_MAX} characters); reserved (in any case): ${RESERVED_WEBHOOK_HEADERS.join(', ')}. A custom User-Agent replaces the service's.`,
    );
}
