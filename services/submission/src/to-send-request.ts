/**
 * A submitted message -> the send request of POST /v1/email/send (libs/contracts send.ts), before
 * the mailer is chosen: pure apart from MIME parsing (mailparser), no I/O.
 *
 * The message is re-rendered from its parsed parts, not relayed byte for byte
 * (docs/submission.md "What is sent"): the send pipeline builds every copy's MIME itself (its
 * Message-ID rules, tracking rewrite, DKIM, per-recipient copies), so what is kept is what the
 * pipeline can carry: From (name and address), Subject, the text and HTML bodies, every attachment
 * and inline part (filename, type, Content-ID, disposition), Reply-To, and every other header
 * that is not the service's (libs/contracts isProtectedHeader) as a custom header, first
 * occurrence of a name only. Recipients are the envelope's (RCPT TO): one named in the To header
 * is `to`, in Cc is `cc`, any other (a Bcc or an envelope-only recipient) is `bcc`, so no copy
 * shows it; when no envelope recipient is named in To or Cc, all of them are `to`, each in a copy
 * of its own (one copy per `to`, as a send with substitutions has). The Bcc header
 * itself is never carried. X-Mailyard-* headers are instructions and are removed:
 * X-Mailyard-Mailer names the mailer, X-Mailyard-Track-Opens / -Clicks `true` turn tracking on.
 *
 * Refused (SMTP answers, never an exception): bare CR or LF line ends (end-of-data smuggling:
 * `<LF>.<LF>`, `<CR>.<CR>` and their mixes hide a second message from servers that read them as
 * an end), a MIME structure mailparser cannot read, no Subject, no body.
 */
import { type SendRequestInput, isProtectedHeader } from '@mailyard/contracts';
import { type AddressObject, type ParsedMail, simpleParser } from 'mailparser';

export interface SubmittedEnvelope {
  /** MAIL FROM ('' for the null sender). */
  mailFrom: string;
  /** RCPT TO addresses in order, each once. */
  rcptTo: readonly string[];
}

export type Converted =
  | {
      ok: true;
      /** The request without `mailer_id` (chosen next: choose-mailer.ts). */
      request: Omit<SendRequestInput, 'mailer_id'>;
      /** X-Mailyard-Mailer's value; null when absent. */
      mailerHeader: string | null;
      /** Whose mailer sends: the envelope sender, else the From address. */
      sender: string;
    }
  | { ok: false; code: number; message: string };

const INSTRUCTION_PREFIX = 'x-mailyard-';
/** Headers of the transport, not of the message: never carried to the copies. */
const DROPPED = new Set(['x-mailer-id', 'delivered-to', 'x-original-to', 'received-spf']);

/** True when `raw` has a CR not followed by LF or an LF not preceded by CR. */
export function hasBareLineEnd(raw: Buffer): boolean {
  let i = raw.indexOf(13);
  while (i !== -1) {
    if (raw[i + 1] !== 10) return true;
    i = raw.indexOf(13, i + 1);
  }
  let j = raw.indexOf(10);
  while (j !== -1) {
    if (j === 0 || raw[j - 1] !== 13) return true;
    j = raw.indexOf(10, j + 1);
  }
  return false;
}

const refuse = (code: number, message: string): Converted => ({ ok: false, code, message });

const addressesOf = (field: AddressObject | AddressObject[] | undefined) =>
  (Array.isArray(field) ? field : field ? [field] : []).flatMap((f) => flatten(f.value));

function flatten(list: AddressObject['value']): Array<{ address: string; name: string }> {
  return list.flatMap((a) =>
    a.group ? flatten(a.group) : a.address ? [{ address: a.address, name: a.name ?? '' }] : [],
  );
}

/** Header lines of the message's top block: lowercase name -> first value, unfolded. */
function headerLines(parsed: ParsedMail): Array<{ name: string; value: string }> {
  return parsed.headerLines.map((h) => {
    const colon = h.line.indexOf(':');
    return {
      name: h.line.slice(0, colon).trim(),
      value: h.line
        .slice(colon + 1)
        .replace(/\r?\n[ \t]+/g, ' ')
        .trim(),
    };
  });
}

export async function toSendRequest(raw: Buffer, envelope: SubmittedEnvelope): Promise<Converted> {
  if (hasBareLineEnd(raw))
    return refuse(550, '5.6.0 Message has a bare CR or LF line end: lines must end with CRLF');
  let parsed: ParsedMail;
  try {
    parsed = await simpleParser(raw, {
      skipTextToHtml: true,
      // A message without a text part is sent without one (no text made from the HTML here:
      // the send pipeline's builder decides that as for an API send).
      skipHtmlToText: true,
      skipTextLinks: true,
      skipImageLinks: true,
      keepCidLinks: true,
    } as Parameters<typeof simpleParser>[1]);
  } catch (err) {
    return refuse(550, `5.6.0 Message could not be parsed as MIME: ${(err as Error).message.slice(0, 200)}`);
  }

  const lines = headerLines(parsed);
  const first = (name: string) => lines.find((h) => h.name.toLowerCase() === name)?.value;
  const fromHeader = addressesOf(parsed.from)[0];
  const sender = envelope.mailFrom || fromHeader?.address || '';
  if (!sender) return refuse(550, '5.1.7 A sender is required: MAIL FROM or a From header');
  if (parsed.subject === undefined) return refuse(550, '5.6.0 A Subject header is required');

  const content: Array<{ type: 'text/plain' | 'text/html'; value: string }> = [];
  if (typeof parsed.text === 'string' && parsed.text.length > 0)
    content.push({ type: 'text/plain', value: parsed.text });
  if (typeof parsed.html === 'string' && parsed.html.length > 0)
    content.push({ type: 'text/html', value: parsed.html });
  if (content.length === 0) return refuse(550, '5.6.0 The message has no text or HTML body');

  // Envelope recipients, by what the headers show of them.
  const lower = (a: string) => a.toLowerCase();
  const toNames = new Map(addressesOf(parsed.to).map((a) => [lower(a.address), a.name]));
  const ccNames = new Map(addressesOf(parsed.cc).map((a) => [lower(a.address), a.name]));
  const named = envelope.rcptTo.some((r) => toNames.has(lower(r)) || ccNames.has(lower(r)));
  const to: Array<{ email: string; name?: string }> = [];
  const cc: Array<{ email: string; name?: string }> = [];
  const bcc: Array<{ email: string }> = [];
  const withName = (email: string, name: string | undefined) => (name ? { email, name } : { email });
  for (const r of envelope.rcptTo) {
    const key = lower(r);
    if (toNames.has(key) || !named) to.push(withName(r, toNames.get(key)));
    else if (ccNames.has(key)) cc.push(withName(r, ccNames.get(key)));
    else bcc.push({ email: r });
  }
  // None of them is named in To or Cc (`To: undisclosed-recipients:;`, a list alias): each gets
  // a copy of its own (a non-empty `substitutions` makes one copy per `to`), so no copy's To
  // header shows the others.
  const separateCopies = !named && to.length > 1;
  if (to.length === 0) {
    // Only Cc'd or blind recipients: the first Cc'd one is addressed (the schema needs a `to`).
    const moved = cc.shift() ?? bcc.shift();
    if (moved) to.push(moved);
  }

  const headers: Record<string, string> = {};
  let mailerHeader: string | null = null;
  let trackOpens = false;
  let trackClicks = false;
  const seen = new Set<string>();
  for (const { name, value } of lines) {
    const key = name.toLowerCase();
    if (key.startsWith(INSTRUCTION_PREFIX)) {
      if (key === 'x-mailyard-mailer' && mailerHeader === null) mailerHeader = value;
      else if (key === 'x-mailyard-track-opens') trackOpens = value.toLowerCase() === 'true';
      else if (key === 'x-mailyard-track-clicks') trackClicks = value.toLowerCase() === 'true';
      continue;
    }
    if (isProtectedHeader(name) || DROPPED.has(key) || seen.has(key)) continue;
    seen.add(key);
    headers[name] = value;
  }

  const attachments = parsed.attachments.map((a) => {
    const inline = a.contentDisposition === 'inline' && !!a.contentId;
    const cid = a.contentId?.replace(/^<|>$/g, '');
    return {
      filename: a.filename || (inline ? `${cid}` : 'attachment'),
      content: a.content.toString('base64'),
      type: a.contentType,
      disposition: inline ? ('inline' as const) : ('attachment' as const),
      ...(cid ? { content_id: cid } : {}),
    };
  });

  const replyTo = first('reply-to');
  const request: Omit<SendRequestInput, 'mailer_id'> = {
    from: withName(fromHeader?.address ?? sender, fromHeader?.name),
    to,
    ...(cc.length ? { cc } : {}),
    ...(bcc.length ? { bcc } : {}),
    subject: parsed.subject,
    content,
    ...(separateCopies ? { substitutions: Object.fromEntries(to.map((r) => [r.email, {}])) } : {}),
    ...(replyTo ? { replyTo } : {}),
    ...(Object.keys(headers).length ? { headers } : {}),
    ...(attachments.length ? { attachments } : {}),
    ...(trackOpens || trackClicks
      ? { settings: { open_tracking: { enable: trackOpens }, click_tracking: { enable: trackClicks } } }
      : {}),
  };
  return { ok: true, request, mailerHeader, sender };
}
