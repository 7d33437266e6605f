/**
 * Header lines as nodemailer writes them: the value encoded by MimeNode's public
 * `encodeHeaderValue` (addresses punycoded and RFC 2047-encoded, msg-ids in angle brackets,
 * dates as `Sun, 01 Mar 2026 10:00:00 +0000`, other text as encoded words when it is not plain
 * ASCII), the line `Key: value` folded at 76 by `foldLines`, and a header whose encoded value is
 * blank left out. Names take the casing rule of header-key.ts.
 */
import { foldLines } from 'nodemailer/lib/mime-funcs';
import MimeNode from 'nodemailer/lib/mime-node';
import { normalizeHeaderKey } from './header-key';

/** One node used only for its header encoding (no per-node state is read: no text encoding is set). */
const encoder = new MimeNode();

/** Appends the folded `Key: value` line to `lines`, unless the encoded value is blank. */
export function pushHeader(lines: string[], name: string, value: unknown): void {
  const key = normalizeHeaderKey(name);
  const encoded = encoder.encodeHeaderValue(key, value as string);
  if (!(encoded || '').toString().trim()) return;
  lines.push(foldLines(`${key}: ${encoded}`, 76));
}
