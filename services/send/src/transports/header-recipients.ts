/**
 * Providers that take a whole MIME message through their API (Gmail API `messages.send`,
 * Microsoft Graph MIME send) have no SMTP envelope: they deliver to the addresses the To, Cc and
 * Bcc headers name, and remove Bcc from what recipients see. So for them:
 *
 * - the copy is built naming only the recipients it is delivered to (`headerRecipientsFor`):
 *   a retried copy names only the recipients still pending, and a tracked copy (one recipient,
 *   `display` showing the others for SMTP) names only its own recipient;
 * - `routeByHeaders` then makes the headers name exactly the envelope: envelope recipients the
 *   headers do not name (bcc, which the MIME writer never writes) go into one Bcc header, and a
 *   message whose headers name anyone outside the envelope is refused rather than sent to them.
 *
 * Addresses compare case-insensitively, domains as IDNA ASCII.
 */
import { domainToASCII } from 'node:url';
import type { CopyRecipient } from '@mailyard/contracts';
import addressparser from 'nodemailer/lib/addressparser';

/** The planned recipients of a copy that this delivery is for, in plan order. */
export function headerRecipientsFor(planned: CopyRecipient[], deliverTo: string[]): CopyRecipient[] {
  const wanted = new Set(deliverTo.map(addressKey));
  return planned.filter((r) => wanted.has(addressKey(r.email)));
}

export type HeaderRouting = { ok: true; raw: Buffer; bcc: string[] } | { ok: false; outside: string[] };

export function addressKey(email: string): string {
  const at = email.lastIndexOf('@');
  if (at === -1) return email.toLowerCase();
  const domain = email.slice(at + 1);
  return `${email.slice(0, at)}@${domainToASCII(domain) || domain}`.toLowerCase();
}

const ADDRESS_HEADERS = new Set(['to', 'cc', 'bcc']);

/** The addresses of a raw (latin1-read) header value; UTF-8 addresses decoded. */
function addressesOf(value: string): string[] {
  return addressparser(Buffer.from(value, 'latin1').toString('utf8'), { flatten: true })
    .map((a) => a.address)
    .filter(Boolean);
}

export function routeByHeaders(raw: Buffer, envelopeTo: string[]): HeaderRouting {
  const text = raw.toString('latin1');
  const split = /\r?\n\r?\n/.exec(text);
  const headEnd = split ? split.index : text.length;
  const nl = text.slice(0, headEnd + 2).includes('\r\n') ? '\r\n' : '\n';
  const lines = text.slice(0, headEnd).split(/\r?\n/);

  // Unfolded fields, each with the line numbers it spans (to drop an existing Bcc).
  const fields: Array<{ name: string; value: string; lines: number[] }> = [];
  lines.forEach((line, i) => {
    const last = fields.at(-1);
    if (/^[ \t]/.test(line) && last) {
      last.value += ` ${line.trim()}`;
      last.lines.push(i);
      return;
    }
    const colon = line.indexOf(':');
    if (colon > 0)
      fields.push({
        name: line.slice(0, colon).trim().toLowerCase(),
        value: line.slice(colon + 1),
        lines: [i],
      });
  });

  const named = new Map<string, string>();
  for (const f of fields) {
    if (!ADDRESS_HEADERS.has(f.name)) continue;
    for (const address of addressesOf(f.value)) named.set(addressKey(address), address);
  }
  const envelope = new Map(envelopeTo.map((e) => [addressKey(e), e]));
  const outside = [...named].filter(([key]) => !envelope.has(key)).map(([, a]) => a);
  if (outside.length > 0) return { ok: false, outside };

  const missing = [...envelope].filter(([key]) => !named.has(key)).map(([, a]) => a);
  if (missing.length === 0) return { ok: true, raw, bcc: [] };
  const existingBcc = fields.filter((f) => f.name === 'bcc');
  const bcc = [...existingBcc.flatMap((f) => addressesOf(f.value)), ...missing];
  const dropped = new Set(existingBcc.flatMap((f) => f.lines));
  const kept = lines.filter((_, i) => !dropped.has(i));
  const head = [`Bcc: ${bcc.join(`,${nl} `)}`, ...kept].join(nl);
  const body = Buffer.from(text.slice(headEnd), 'latin1');
  return { ok: true, raw: Buffer.concat([Buffer.from(head, 'utf8'), body]), bcc };
}
