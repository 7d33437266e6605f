/**
 * A small MIME reader for tests: top-level headers (unfolded, lower-case names) and the decoded
 * text of every leaf part (quoted-printable and base64 decoded as UTF-8). Enough to read back
 * what nodemailer's MailComposer built; not a general parser.
 */
export interface ParsedMessage {
  headers: Record<string, string>;
  parts: Array<{ type: string; text: string }>;
}

function splitHead(raw: string): { headers: Record<string, string>; body: string } {
  const at = raw.search(/\r?\n\r?\n/);
  const head = at === -1 ? raw : raw.slice(0, at);
  const body = at === -1 ? '' : raw.slice(at).replace(/^\r?\n\r?\n/, '');
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { headers, body };
}

function decode(body: string, encoding: string): string {
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') {
    const soft = body.replace(/=\r?\n/g, '');
    const bytes: number[] = [];
    for (let i = 0; i < soft.length; i++) {
      const m = soft[i] === '=' ? /^[0-9A-Fa-f]{2}$/.exec(soft.slice(i + 1, i + 3)) : null;
      if (m) {
        bytes.push(Number.parseInt(m[0], 16));
        i += 2;
      } else bytes.push(...Buffer.from(soft[i]!, 'utf8'));
    }
    return Buffer.from(bytes).toString('utf8');
  }
  return body;
}

function leaves(raw: string): Array<{ type: string; text: string }> {
  const { headers, body } = splitHead(raw);
  const type = (headers['content-type'] ?? 'text/plain').toLowerCase();
  const boundary = /boundary="?([^";]+)"?/i.exec(headers['content-type'] ?? '')?.[1];
  if (type.startsWith('multipart/') && boundary) {
    const sections = body.split(`--${boundary}`).slice(1);
    return sections.filter((s) => !s.startsWith('--')).flatMap((s) => leaves(s.replace(/^\r?\n/, '')));
  }
  const encoding = (headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  return [{ type: type.split(';')[0]!.trim(), text: decode(body, encoding) }];
}

export function parseMessage(raw: string | Buffer): ParsedMessage {
  const text = raw.toString();
  return { headers: splitHead(text).headers, parts: leaves(text) };
}

export interface SimpleMessage {
  from: string;
  to: string;
  subject: string;
  /** Message-ID with angle brackets; omitted when not given. */
  id?: string;
  /** More header lines, CRLF-separated. */
  extra?: string;
  body?: string;
}

/** A small text/plain RFC 5322 message with CRLF line ends (seeding test mailboxes). */
export function simpleMessage(o: SimpleMessage): string {
  return [
    `From: ${o.from}`,
    `To: ${o.to}`,
    `Subject: ${o.subject}`,
    ...(o.id ? [`Message-ID: ${o.id}`] : []),
    ...(o.extra ? [o.extra] : []),
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    o.body ?? 'hello',
    '',
  ].join('\r\n');
}
