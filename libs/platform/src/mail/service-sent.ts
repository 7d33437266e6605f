/**
 * Messages the service itself sent carry the header `X-Is-Svc` (services/send/src/mime).
 * IMAP backfill does not post them when found in the SENT folder (docs/backfill.md
 * "Worker"); the inbound service recognises the returned original inside a bounce or complaint
 * as ours, and never takes our own outgoing mail arriving at the bounce domain for a report.
 * Looks only at the header block (up to the first empty line), case-insensitively, so a body
 * line cannot trigger it. Linear time.
 */
export function isServiceSent(source: Buffer): boolean {
  const end = headerEnd(source);
  const head = source.subarray(0, end).toString('latin1');
  return /(?:^|\r?\n)x-is-svc[ \t]*:/i.test(head);
}

function headerEnd(source: Buffer): number {
  const crlf = source.indexOf('\r\n\r\n');
  const lf = source.indexOf('\n\n');
  const ends = [crlf, lf].filter((i) => i >= 0);
  return ends.length ? Math.min(...ends) : source.length;
}

/** The Message-ID header value (unfolded, trimmed), '' when absent. */
export function messageIdOf(source: Buffer): string {
  const head = source.subarray(0, headerEnd(source)).toString('latin1');
  const m = /(?:^|\n)message-id[ \t]*:[ \t]*((?:[^\r\n]|\r?\n[ \t])*)/i.exec(head);
  return m ? m[1]!.replace(/\r?\n[ \t]+/g, ' ').trim() : '';
}
