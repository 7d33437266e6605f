/**
 * What an IMAP server may make this process hold: imapflow's parser bounds, the same for every
 * connection to a tenant's server (history backfill, live sync, the gateway's login check).
 * imapflow's defaults allow a 1 GiB literal and a 2 GiB response per connection; a server the
 * tenant controls could announce one and stream it, and imapflow would buffer it whole.
 *
 * imapflow checks a literal's announced size before reading a byte of it and a line's length as
 * it grows; past a bound the connection fails at once (an 'error' event with the code below, the
 * command in flight sees the connection gone) and nothing more is read.
 *
 * - A literal is a message source at most: `maxLiteralBytes` is the largest message the caller
 *   reads plus one byte (backfill asks for `BODY.PEEK[]<0.max+1>`, so one byte more tells it the
 *   message is over its cap without reading the rest); a login check reads no message.
 * - A line (a response without a literal) is a SEARCH answer at most: 32 MiB, about 4 million
 *   UIDs, one folder's worth; a login check's lines are short.
 * - A response is its literal or its line plus framing; tokens per response are bounded too
 *   (each costs about a hundred bytes of heap while parsed; a FETCH row has a dozen).
 */
export interface ImapParserLimits {
  maxLiteralSize: number;
  maxLineLength: number;
  maxResponseSize: number;
  maxResponseTokens: number;
}

/** The longest answer line of a connection that reads mail (a SEARCH of a large folder). */
export const IMAP_MAX_LINE_BYTES = 32 * 1024 * 1024;
/** Lines and literals of a login check (greeting, CAPABILITY, ID, the login's answer). */
export const IMAP_LOGIN_MAX_BYTES = 64 * 1024;
/** Parse-tree nodes per response (imapflow's default is a million: ~100 MB of heap). */
export const IMAP_MAX_RESPONSE_TOKENS = 100_000;
/** Room a response needs around its literal or line (the FETCH row, its UID, dates, sizes). */
const FRAMING_BYTES = 64 * 1024;

/**
 * The parser bounds of a connection that reads messages of at most `maxMessageBytes` (null: a
 * login check, which reads none).
 */
export function imapParserLimits(maxMessageBytes: number | null): ImapParserLimits {
  const literal = maxMessageBytes === null ? IMAP_LOGIN_MAX_BYTES : maxMessageBytes + 1;
  const line = maxMessageBytes === null ? IMAP_LOGIN_MAX_BYTES : IMAP_MAX_LINE_BYTES;
  return {
    maxLiteralSize: literal,
    maxLineLength: line,
    maxResponseSize: Math.max(literal, line) + FRAMING_BYTES,
    maxResponseTokens: IMAP_MAX_RESPONSE_TOKENS,
  };
}

/** imapflow's codes for a server that broke a parser bound or sent more rows than it keeps. */
const LIMIT_CODES = new Set([
  'LiteralTooLarge',
  'LineTooLarge',
  'ResponseTooLarge',
  'TooManyTokens',
  'TooManyResponses',
]);

/** True when `err` is imapflow refusing a server's response as over a bound above. */
export function isImapLimitError(err: unknown): err is Error & { code: string } {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && LIMIT_CODES.has(code);
}
