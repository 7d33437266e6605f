import { z } from 'zod';
import { ErrorText } from '../errors';
import { addressKey, parseAddress } from '../validation/address';
import { decodedBase64Length, isBase64, stripBase64Whitespace } from '../validation/base64';
import { hasControlChars } from '../validation/control';
import { isFieldName, isProtectedHeader } from '../validation/headers';
import { fieldPath } from '../validation/messages';
import {
  type RuleCtx,
  at,
  fields,
  isObject,
  optional,
  rule,
  stringRule,
  typeIssue,
} from '../validation/rule';
import { SendAtText, parseSendAt, sendAtProblem } from './send-at';
import { SEND_LIMITS } from './send-limits';
import { normalizeSubstitutions } from './send-substitutions';
import { type Content, ContentSchema, checkContent } from './templates';

export { SEND_LIMITS } from './send-limits';

export const ATTACHMENT_DISPOSITIONS = ['attachment', 'inline'] as const;
export type AttachmentDisposition = (typeof ATTACHMENT_DISPOSITIONS)[number];

const issue = (ctx: RuleCtx, message: string, path?: (string | number)[]) =>
  ctx.addIssue({ code: z.ZodIssueCode.custom, message, ...(path ? { path } : {}) });
const controlMessage = (field: string) => `${field} must not contain line breaks or other control characters`;

interface TextRule {
  max: number;
  header?: boolean;
  required?: boolean;
}

/** A string; `header` ones end up in a message header and may hold no control characters. */
function checkText(o: TextRule, v: string, ctx: RuleCtx): string {
  if (o.required && v.trim() === '') issue(ctx, `${fieldPath(ctx.path)} is required`);
  else if (o.header && hasControlChars(v)) issue(ctx, controlMessage(fieldPath(ctx.path)));
  else if (v.length > o.max) issue(ctx, `${fieldPath(ctx.path)} must be at most ${o.max} characters`);
  return v;
}

const text = (o: TextRule) => stringRule((v, ctx) => checkText(o, v, ctx));

/** A bare addr-spec, normalized to `local@ascii-domain` (IDNA). */
function checkEmail(v: string, ctx: RuleCtx): string {
  const parsed = parseAddress(v);
  if (parsed) return parsed.email;
  const f = fieldPath(ctx.path);
  issue(
    ctx,
    v === ''
      ? `${f} is required`
      : hasControlChars(v)
        ? controlMessage(f)
        : `${f} must be a valid email address`,
  );
  return z.NEVER;
}

const NAME_ADDR = /^\s*(?:"((?:[^"\\]|\\.)*)"|([^"<>]*?))\s*<([^<>]*)>\s*$/;

/**
 * `replyTo`: a bare address or the `Name <address>` form mail clients write (the name may be
 * quoted: `"Doe, Jane" <jane@example.com>`). Normalized to the address alone, or to
 * `"Name" <address>` with the name quoted (quotes and backslashes escaped), which the MIME
 * builder writes as is. Control characters (header injection) are refused.
 */
export const ReplyToSchema = stringRule((v, ctx): string => {
  const f = fieldPath(ctx.path);
  if (v === '') {
    issue(ctx, `${f} is required`);
    return z.NEVER;
  }
  if (hasControlChars(v)) {
    issue(ctx, controlMessage(f));
    return z.NEVER;
  }
  if (v.length > 2048) {
    issue(ctx, `${f} must be a valid email address`);
    return z.NEVER;
  }
  const bare = parseAddress(v);
  if (bare) return bare.email;
  const m = NAME_ADDR.exec(v);
  const parsed = m ? parseAddress(m[3]!.trim()) : null;
  const name = m ? (m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]!).trim() : '';
  if (!m || !parsed || name.length > SEND_LIMITS.maxNameLength) {
    issue(ctx, `${f} must be a valid email address`);
    return z.NEVER;
  }
  if (name === '') return parsed.email;
  return `"${name.replace(/["\\]/g, (c) => `\\${c}`)}" <${parsed.email}>`;
});

export interface Recipient {
  email: string;
  name?: string | undefined;
}

const NAME: TextRule = { max: SEND_LIMITS.maxNameLength, header: true };

/**
 * `{ email, name? }`, checked as a zod object of those two fields would be (same issues in the
 * same order, unknown fields dropped, `name` present when given, null read as absent).
 */
function checkRecipient(v: unknown, ctx: RuleCtx): Recipient {
  if (!isObject(v)) return typeIssue(ctx, z.ZodParsedType.object, v);
  const email =
    typeof v.email === 'string'
      ? checkEmail(v.email, at(ctx, 'email'))
      : typeIssue(at(ctx, 'email'), 'string', v.email);
  const name = v.name;
  if (name === null || name === undefined) return 'name' in v ? { email, name: undefined } : { email };
  return {
    email,
    name:
      typeof name === 'string'
        ? checkText(NAME, name, at(ctx, 'name'))
        : typeIssue(at(ctx, 'name'), 'string', name),
  };
}

export const RecipientSchema = rule(
  z.object({ email: stringRule(checkEmail), name: optional(text(NAME)) }),
  checkRecipient,
);

/** A list of recipients (as a zod array of them, `required`: at least one). */
const recipients = (required: boolean) =>
  rule(required ? z.array(RecipientSchema).min(1) : z.array(RecipientSchema), (v, ctx): Recipient[] => {
    if (!Array.isArray(v)) return typeIssue(ctx, z.ZodParsedType.array, v);
    if (required && v.length === 0) {
      ctx.addIssue({
        code: z.ZodIssueCode.too_small,
        minimum: 1,
        type: 'array',
        inclusive: true,
        exact: false,
        message: ErrorText.toRequired,
      });
    }
    const list: Recipient[] = [];
    for (let i = 0; i < v.length; i++) list.push(checkRecipient(v[i], at(ctx, i)));
    return list;
  });

/** The content items: at least one, at most one per type (checked once every item is valid). */
const contentList = rule(z.array(ContentSchema), (v, ctx): Content[] => {
  if (!Array.isArray(v)) return typeIssue(ctx, z.ZodParsedType.array, v);
  const list: Content[] = [];
  let valid = true;
  for (let i = 0; i < v.length; i++) {
    const content = checkContent(v[i], at(ctx, i));
    if (content) list.push(content);
    else valid = false;
  }
  if (!valid) return z.NEVER;
  if (list.length === 0) issue(ctx, ErrorText.contentRequired);
  else if (new Set(list.map((c) => c.type)).size !== list.length) issue(ctx, ErrorText.contentTypeTwice);
  return list;
});

/** The send payload's substitutions (docs/api/send.md), normalized by normalizeSubstitutions (send-substitutions.ts). */
const substitutionsSchema = rule(z.unknown(), (subs, ctx) => {
  const out = normalizeSubstitutions(
    subs,
    () => ctx.path,
    (message, path) => issue(ctx, message, path),
  );
  return out ?? z.NEVER;
});

const VISIBLE_ASCII = /^[\x21-\x7E]+$/;
const VISIBLE_ASCII_AND_SPACE = /^[\x20-\x7E]+$/;

const headersSchema = z.record(z.string(), z.string()).superRefine((headers, ctx) => {
  const names = Object.keys(headers);
  if (names.length > SEND_LIMITS.maxHeaders)
    issue(ctx, `headers may hold at most ${SEND_LIMITS.maxHeaders} entries`);
  const seen = new Set<string>();
  for (const name of names) {
    const value = headers[name]!;
    const f = `headers.${name}`;
    const lower = name.toLowerCase();
    if (!isFieldName(name) || name.length > SEND_LIMITS.maxHeaderNameLength) {
      issue(ctx, `headers: ${JSON.stringify(name)} is not a valid header name`);
    } else if (isProtectedHeader(name)) {
      issue(ctx, `${f} cannot be set: the service sets this header`);
    } else if (seen.has(lower)) {
      issue(ctx, `${f} is given more than once`);
    } else if (hasControlChars(value)) {
      issue(ctx, controlMessage(f));
    } else if (value.length > SEND_LIMITS.maxHeaderValueLength) {
      issue(ctx, `${f} must be at most ${SEND_LIMITS.maxHeaderValueLength} characters`);
    } else if (
      (lower === 'message-id' || lower === 'thread-id') &&
      !(VISIBLE_ASCII.test(value) && value.length <= 255)
    ) {
      issue(ctx, `${f} must be 1 to 255 printable ASCII characters without spaces`);
    } else if ((lower === 'in-reply-to' || lower === 'references') && !VISIBLE_ASCII_AND_SPACE.test(value)) {
      issue(ctx, `${f} must be message ids in printable ASCII`);
    }
    seen.add(lower);
  }
});

const MIME_TYPE =
  /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}(?:\s*;.*)?$/;
const CONTENT_ID = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.@-]{1,255}$/;

export const AttachmentSchema = z
  .object({
    filename: text({ max: SEND_LIMITS.maxFilenameLength, header: true, required: true }),
    /** Standard base64; line breaks are removed. */
    content: z.string().transform((v, ctx) => {
      const b64 = stripBase64Whitespace(v);
      if (b64 === '') issue(ctx, `${fieldPath(ctx.path)} is required`);
      else if (!isBase64(b64)) issue(ctx, `${fieldPath(ctx.path)} must be valid base64`);
      return b64;
    }),
    type: optional(
      z.string().superRefine((v, ctx) => {
        const f = fieldPath(ctx.path);
        if (hasControlChars(v)) issue(ctx, controlMessage(f));
        else if (v.length > 255 || !MIME_TYPE.test(v))
          issue(ctx, `${f} must be a MIME type such as application/pdf`);
      }),
    ),
    disposition: optional(z.enum(ATTACHMENT_DISPOSITIONS)).transform(
      (v): AttachmentDisposition => v ?? 'attachment',
    ),
    content_id: optional(
      z.string().superRefine((v, ctx) => {
        const f = fieldPath(ctx.path);
        if (hasControlChars(v)) issue(ctx, controlMessage(f));
        else if (!CONTENT_ID.test(v)) issue(ctx, `${f} must be 1 to 255 characters without spaces, < or >`);
      }),
    ),
  })
  .superRefine((a, ctx) => {
    if (a.disposition === 'inline' && !a.content_id) {
      issue(ctx, `${fieldPath([...ctx.path, 'content_id'])} is required for inline attachments`, [
        'content_id',
      ]);
    }
  });
export type Attachment = z.infer<typeof AttachmentSchema>;

const toggle = z.object({ enable: z.boolean() });
const settingsSchema = z.object({ open_tracking: optional(toggle), click_tracking: optional(toggle) });

interface TrackingSettings {
  open_tracking: { enable: boolean };
  click_tracking: { enable: boolean };
}

/** The tracking settings, explicit: what is not given is off. */
const trackingSettings = (settings: z.output<typeof settingsSchema> | undefined): TrackingSettings => ({
  open_tracking: { enable: settings?.open_tracking?.enable ?? false },
  click_tracking: { enable: settings?.click_tracking?.enable ?? false },
});

/** A JSON object of at most SEND_LIMITS.maxCustomArgsBytes, copied as a zod record would be. */
const customArgsSchema = rule(z.record(z.string(), z.unknown()), (v, ctx) => {
  if (!isObject(v)) return typeIssue(ctx, z.ZodParsedType.object, v);
  const args: Record<string, unknown> = {};
  for (const key in v) if (key !== '__proto__') args[key] = v[key];
  if (Buffer.byteLength(JSON.stringify(args), 'utf8') > SEND_LIMITS.maxCustomArgsBytes)
    issue(ctx, ErrorText.customArgsTooLarge);
  return args;
});

/**
 * `send_at` (send-at.ts): an RFC 3339 date-time with offset, at most 7 days ahead; normalized to
 * UTC ISO text (`2026-03-01T09:30:00.000Z`). Whether it is ahead (scheduled) or not (now) is
 * the gateway's decision at accept (releaseAtMs).
 */
export const SendAtSchema = rule(
  z.string().datetime({ offset: true }).describe('RFC 3339 date-time with offset; at most 7 days ahead'),
  (v, ctx): string => {
    if (typeof v !== 'string') return typeIssue(ctx, z.ZodParsedType.string, v);
    const at = parseSendAt(v);
    if (at === null) {
      issue(ctx, SendAtText.invalid);
      return z.NEVER;
    }
    const problem = sendAtProblem(at, Date.now());
    if (problem) issue(ctx, problem);
    return new Date(at).toISOString();
  },
);

/**
 * The send payload (docs/api/send.md), validated and normalized: addresses in ASCII (IDNA) form,
 * attachments without line breaks, substitutions keyed by lowercased address, tracking
 * settings explicit (default off). Unknown fields are dropped. `cc` is accepted beside the
 * spec's `bcc` (same shape). Cross-field rules are in parseSendRequest (send-parse.ts).
 */
export const SendRequestSchema = fields({
  from: RecipientSchema,
  to: recipients(true),
  cc: optional(recipients(false)),
  bcc: optional(recipients(false)),
  mailer_id: text({ max: SEND_LIMITS.maxIdLength, header: true, required: true }),
  subject: optional(text({ max: SEND_LIMITS.maxSubjectLength, header: true, required: true })),
  content: optional(contentList),
  template_id: optional(text({ max: SEND_LIMITS.maxIdLength, required: true })),
  substitutions: optional(substitutionsSchema),
  replyTo: optional(ReplyToSchema),
  headers: optional(headersSchema),
  attachments: optional(z.array(AttachmentSchema)),
  settings: optional(settingsSchema),
  campaign_id: optional(text({ max: SEND_LIMITS.maxIdLength, header: true, required: true })),
  custom_args: optional(customArgsSchema),
  send_at: optional(SendAtSchema),
}).transform((req) => {
  const settings = trackingSettings(req.settings);
  // Listed last, as the output always has; most requests leave it out, so no key moves (and
  // no copy of the object is made).
  if ('settings' in req) Reflect.deleteProperty(req, 'settings');
  const out = req as Omit<typeof req, 'settings'> & { settings: TrackingSettings };
  out.settings = settings;
  return out;
});

/** The payload as a client writes it. */
export type SendRequestInput = z.input<typeof SendRequestSchema>;
/** The payload after validation and normalization. */
export type SendRequest = z.output<typeof SendRequestSchema>;

/**
 * What `sends.request` holds and the send service reads: the validated request with subject
 * and content resolved at accept (request value, else the template's as it was then), not yet
 * rendered. The send service renders `{{variable}}` per copy and never re-reads the template.
 */
export type StoredSendRequest = Omit<SendRequest, 'subject' | 'content'> & {
  subject: string;
  content: Content[];
};

/** 200 answer of POST /v1/email/send (docs/api/send.md). */
export interface SendResponse {
  success: true;
  ref_id: string;
  /** `scheduled` when `send_at` is ahead: the send waits (status SCHEDULED) until then. */
  message: 'queued' | 'scheduled';
}

/**
 * 200 answer of POST /v1/email/send/{ref_id}/cancel (docs/api/send.md "Scheduled
 * sends"): `cancelled` = log entries (recipients of copies) that became CANCELLED.
 */
export interface CancelSendResponse {
  success: true;
  message: string;
  cancelled: number;
}

export type RecipientType = 'to' | 'cc' | 'bcc';

export interface CopyRecipient {
  email: string;
  name?: string;
  type: RecipientType;
}

export interface PlannedCopy {
  copy_id: string;
  /** Who the copy is delivered to (its email_logs rows, the SMTP envelope). */
  recipients: CopyRecipient[];
  /**
   * Who its To/Cc headers name, when that differs from `recipients` (a tracked copy delivered
   * to one recipient still shows the message's other to/cc recipients).
   */
  display?: CopyRecipient[];
}

type RecipientFields = Pick<SendRequest, 'to' | 'cc' | 'bcc' | 'substitutions'> & {
  settings?: Pick<SendRequest['settings'], 'open_tracking' | 'click_tracking'>;
};

/** A non-empty `substitutions` object makes one copy per `to` recipient. */
export function isPerRecipient(req: Pick<SendRequest, 'substitutions'>): boolean {
  // Any own key decides: the send service asks once per copy, and listing every recipient's
  // key (Object.keys) made that linear in the send's recipients.
  const subs = req.substitutions;
  if (subs === undefined || subs === null) return false;
  for (const key in subs) if (Object.hasOwn(subs, key)) return true;
  return false;
}

/** Open or click tracking on: every recipient gets a copy of their own (tokens name them). */
export function isTracked(req: Pick<RecipientFields, 'settings'>): boolean {
  return req.settings?.open_tracking?.enable === true || req.settings?.click_tracking?.enable === true;
}

export const copyId = (refId: string, n: number): string => `${refId}.${n}`;

/**
 * The copies of a send (docs/events.md "Copies"). Without substitutions: one copy `<ref_id>.1`
 * to every to, cc and bcc recipient. With substitutions: copy `<ref_id>.<n>` per `to`
 * recipient (in request order, n from 1), each also carrying every cc and bcc recipient, as a
 * mail merge does. With open or click tracking, each of those copies is further split into one
 * copy per recipient (same order), each showing the original To/Cc (`display`), so the tracking
 * tokens of a copy name exactly the person it went to (docs/tracking.md). The gateway writes one
 * email_logs row per recipient of each copy; the send service calls this again to build each
 * copy's To/Cc with display names.
 */
export function planCopies(req: RecipientFields, refId: string): PlannedCopy[] {
  const tag =
    (type: RecipientType) =>
    (r: Recipient): CopyRecipient => ({ email: r.email, ...(r.name ? { name: r.name } : {}), type });
  const extra = [...(req.cc ?? []).map(tag('cc')), ...(req.bcc ?? []).map(tag('bcc'))];
  const groups = isPerRecipient(req)
    ? req.to.map((r) => [tag('to')(r), ...extra])
    : [[...req.to.map(tag('to')), ...extra]];
  if (!isTracked(req)) return groups.map((recipients, i) => ({ copy_id: copyId(refId, i + 1), recipients }));
  let n = 0;
  return groups.flatMap((group) => {
    const display = group.filter((r) => r.type !== 'bcc');
    return group.map((r) => ({ copy_id: copyId(refId, ++n), recipients: [r], display }));
  });
}

/** Deliveries (= email_logs rows) a request makes; bounded by SEND_LIMITS.maxRecipients. */
export function deliveryCount(req: RecipientFields): number {
  const others = (req.cc?.length ?? 0) + (req.bcc?.length ?? 0);
  return isPerRecipient(req) ? req.to.length * (1 + others) : req.to.length + others;
}

/** The variables of one recipient (empty when none were given). */
export function substitutionsFor(
  req: Pick<SendRequest, 'substitutions'>,
  email: string,
): Record<string, string> {
  return req.substitutions?.[addressKey(email)] ?? {};
}

/** Bytes a message carries for the 30 MB limit: UTF-8 bodies plus decoded attachments. */
export function messageSizeBytes(content: Content[], attachments: Attachment[] | undefined): number {
  let n = 0;
  for (const c of content) n += Buffer.byteLength(c.value, 'utf8');
  for (const a of attachments ?? []) n += decodedBase64Length(a.content);
  return n;
}
