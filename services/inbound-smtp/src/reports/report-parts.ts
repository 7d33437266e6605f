/**
 * Finds the report attachments of a message read by report-mime.ts, pure: every leaf part whose
 * type (or file name) is one a reporter sends reports as is a candidate; the attachment's bytes
 * decide how it is unpacked (unpack.ts), the address it came to which parser reads it.
 * - DMARC aggregate (RFC 7489 7.2.1.1): `application/zip`, `application/gzip` and their `x-`
 *   forms, `text/xml`, `application/xml`, or `application/octet-stream` / any type with a name
 *   ending `.xml`, `.xml.gz`, `.gz`, `.zip` (several per message are all read; a single-part
 *   message is its own leaf, so a report sent as the whole body is found too);
 * - TLS-RPT (RFC 8460 5.3): `application/tlsrpt+gzip`, `application/tlsrpt+json`, also
 *   `application/json`, `application/gzip`, or a name ending `.json`, `.json.gz`, `.gz`.
 * At most MAX_REPORT_ATTACHMENTS per message.
 */
import libmime from 'libmime';
import { type MimeMessage, type MimePart, first } from '../report-mime';

export type ReportKind = 'dmarc' | 'tls_rpt';

export const MAX_REPORT_ATTACHMENTS = 10;

export interface ReportAttachment {
  name: string;
  type: string;
  bytes: Buffer;
}

const TYPES: Record<ReportKind, Set<string>> = {
  dmarc: new Set([
    'application/zip',
    'application/x-zip',
    'application/x-zip-compressed',
    'application/gzip',
    'application/x-gzip',
    'text/xml',
    'application/xml',
  ]),
  tls_rpt: new Set([
    'application/tlsrpt+gzip',
    'application/tlsrpt+json',
    'application/json',
    'application/gzip',
    'application/x-gzip',
  ]),
};

const NAMES: Record<ReportKind, RegExp> = {
  dmarc: /\.(xml|xml\.gz|gz|zip)$/i,
  tls_rpt: /\.(json|json\.gz|gz)$/i,
};

/** The part's file name: Content-Disposition `filename`, else Content-Type `name` ('' when none). */
export function partName(part: MimePart): string {
  const disposition = first(part.headers, 'content-disposition');
  if (disposition) {
    try {
      const parsed = libmime.parseHeaderValue(disposition) as { params?: Record<string, string> };
      if (parsed.params?.filename) return parsed.params.filename;
    } catch {
      // an unreadable disposition: fall back to the type's name
    }
  }
  return part.params.name ?? '';
}

export function reportAttachments(mail: MimeMessage, kind: ReportKind): ReportAttachment[] {
  const out: ReportAttachment[] = [];
  for (const part of mail.parts) {
    if (part.body.length === 0) continue;
    const name = partName(part);
    if (!TYPES[kind].has(part.type) && !NAMES[kind].test(name)) continue;
    out.push({ name, type: part.type, bytes: part.body });
    if (out.length >= MAX_REPORT_ATTACHMENTS) break;
  }
  return out;
}
