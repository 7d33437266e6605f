/**
 * The fast path of send validation: the send payloads a busy API mostly sees (recipients,
 * subject, content, substitutions, settings, custom_args, no attachments, headers or replyTo)
 * checked by plain code instead of SendRequestSchema's zod tree, which costs about 100 µs and
 * most of a request's garbage per send. It decides only what it is sure of: a payload it
 * accepts yields exactly what `SendRequestSchema.safeParse` returns for it (same values, same
 * keys present; send-fast.test.ts compares the two on generated payloads), and anything else
 * (a field it does not handle, any invalid value) returns undefined, so the schema runs and
 * words the error as before. Rules mirror send.ts field by field.
 */
import { parseAddress } from '../validation/address';
import { hasControlChars } from '../validation/control';
import type { SendRequest } from './send';
import { SEND_LIMITS } from './send-limits';
import { normalizeSubstitutions } from './send-substitutions';
import { CONTENT_TYPES } from './templates';

/** A JSON object (what JSON.parse makes); anything else (arrays, dates, class instances) goes to the schema. */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Thrown inside the fast path: not decided here, the schema decides. */
const UNDECIDED = Symbol('undecided');

function undecided(): never {
  throw UNDECIDED;
}

/** text() of send.ts: a string, non-blank when required, no control characters in a header. */
function text(v: unknown, max: number, header: boolean, required: boolean): string {
  if (typeof v !== 'string') undecided();
  if (required && v.trim() === '') undecided();
  if (header && hasControlChars(v)) undecided();
  if (v.length > max) undecided();
  return v;
}

/** `key` of `o`, as `optional(...)` of send.ts reads it: null and absent both mean undefined. */
const has = (o: Record<string, unknown>, key: string) => key in o;

function recipient(v: unknown): { email: string; name?: string } {
  if (!isPlainObject(v)) undecided();
  const parsed = typeof v.email === 'string' ? parseAddress(v.email) : null;
  if (!parsed) undecided();
  const out: { email: string; name?: string } = { email: parsed.email };
  if (has(v, 'name')) {
    const name = v.name;
    out.name =
      name === null || name === undefined ? undefined : text(name, SEND_LIMITS.maxNameLength, true, false);
  }
  return out;
}

function recipients(v: unknown, min: number): Array<{ email: string; name?: string }> {
  if (!Array.isArray(v) || v.length < min) undecided();
  return Array.from(v, (r: unknown) => recipient(r));
}

function content(v: unknown): SendRequest['content'] {
  if (!Array.isArray(v) || v.length === 0) undecided();
  const seen = new Set<string>();
  return Array.from(v, (c: unknown) => {
    if (!isPlainObject(c) || typeof c.value !== 'string') undecided();
    const type = c.type as (typeof CONTENT_TYPES)[number];
    if (!CONTENT_TYPES.includes(type) || seen.has(type)) undecided();
    seen.add(type);
    return { type, value: c.value };
  });
}

function toggle(v: unknown): boolean {
  if (v === null || v === undefined) return false;
  if (!isPlainObject(v) || typeof v.enable !== 'boolean') undecided();
  return v.enable;
}

function customArgs(v: unknown): Record<string, unknown> {
  if (!isPlainObject(v) || Object.hasOwn(v, '__proto__')) undecided();
  const out = { ...v };
  if (Buffer.byteLength(JSON.stringify(out), 'utf8') > SEND_LIMITS.maxCustomArgsBytes) undecided();
  return out;
}

/** Fields the fast path leaves to the schema whenever they carry a value. */
const SCHEMA_ONLY = ['replyTo', 'headers', 'attachments'] as const;

/** What `SendRequestSchema.safeParse(input)` returns as data, or undefined: let the schema decide. */
export function fastSendRequest(input: unknown): SendRequest | undefined {
  try {
    return decide(input);
  } catch (err) {
    if (err === UNDECIDED) return undefined;
    throw err;
  }
}

function decide(input: unknown): SendRequest {
  if (!isPlainObject(input)) undecided();
  for (const key of SCHEMA_ONLY) if (input[key] !== undefined && input[key] !== null) undecided();
  // In the schema's key order; an optional key given as null is present with value undefined.
  const out: Record<string, unknown> = {
    from: recipient(input.from),
    to: recipients(input.to, 1),
  };
  const optional = (key: string, parse: (v: unknown) => unknown) => {
    if (!has(input, key)) return;
    const v = input[key];
    out[key] = v === null || v === undefined ? undefined : parse(v);
  };
  optional('cc', (v) => recipients(v, 0));
  optional('bcc', (v) => recipients(v, 0));
  out.mailer_id = text(input.mailer_id, SEND_LIMITS.maxIdLength, true, true);
  optional('subject', (v) => text(v, SEND_LIMITS.maxSubjectLength, true, true));
  optional('content', content);
  optional('template_id', (v) => text(v, SEND_LIMITS.maxIdLength, false, true));
  optional('substitutions', (v) => normalizeSubstitutions(v, ['substitutions']) ?? undecided());
  for (const key of SCHEMA_ONLY) if (has(input, key)) out[key] = undefined;
  let open = false;
  let click = false;
  const settings = input.settings;
  if (settings !== null && settings !== undefined) {
    if (!isPlainObject(settings)) undecided();
    open = toggle(settings.open_tracking);
    click = toggle(settings.click_tracking);
  }
  optional('campaign_id', (v) => text(v, SEND_LIMITS.maxIdLength, true, true));
  optional('custom_args', customArgs);
  out.settings = { open_tracking: { enable: open }, click_tracking: { enable: click } };
  return out as SendRequest;
}
