/**
 * `send_at` of POST /v1/email/send (docs/api/send.md "Scheduled sends"): when the send is
 * released. Pure decisions, tested in send-at.test.ts:
 * - parseSendAt: an RFC 3339 date-time with its offset (`Z` or `+hh:mm`/`-hh:mm`), seconds
 *   required, fractions allowed; a date or a time without offset is refused (its instant would
 *   depend on the server's zone). Calendar-checked (no 2026-02-30).
 * - sendAtProblem: null when acceptable at `nowMs`, else the message; at most
 *   SEND_AT_MAX_AHEAD_MS ahead (past or present is fine: it means now).
 * - releaseAtMs: when to release: null = now (absent, past or present), else the instant.
 */
export const SEND_AT_MAX_AHEAD_MS = 7 * 24 * 60 * 60 * 1000;

export const SendAtText = {
  invalid: 'send_at must be an RFC 3339 date-time with a time zone offset, such as 2026-03-01T09:30:00Z',
  tooFar: 'send_at must be at most 7 days ahead',
} as const;

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/** Milliseconds since the epoch of an RFC 3339 date-time with offset; null when it is not one. */
export function parseSendAt(text: string): number | null {
  if (text.length > 40) return null;
  const m = RFC3339.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return null;
  // RFC 3339 allows second 60 (a leap second); it is read as the next instant.
  if (hour > 23 || minute > 59 || second > 60) return null;
  let offsetMin = 0;
  if (m[9]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return null;
    offsetMin = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const fraction = m[7] ? Math.floor(Number(`0${m[7]}`) * 1000) : 0;
  return Date.UTC(year, month - 1, day, hour, minute, second, fraction) - offsetMin * 60_000;
}

/** Why `sendAtMs` cannot be accepted at `nowMs`, or null. */
export function sendAtProblem(sendAtMs: number, nowMs: number): string | null {
  return sendAtMs - nowMs > SEND_AT_MAX_AHEAD_MS ? SendAtText.tooFar : null;
}

/** When a send with `sendAt` (normalized ISO text, or absent) is released: null = now. */
export function releaseAtMs(sendAt: string | undefined, nowMs: number): number | null {
  if (sendAt === undefined) return null;
  const at = Date.parse(sendAt);
  return Number.isFinite(at) && at > nowMs ? at : null;
}
