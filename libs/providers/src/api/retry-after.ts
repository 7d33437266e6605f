/**
 * Reads a `Retry-After` header (RFC 9110 section 10.2.3): either delay-seconds or an HTTP-date
 * (IMF-fixdate, or the obsolete RFC 850 and asctime forms, all in GMT). Gmail and Microsoft
 * Graph send seconds; proxies in front of them may send a date. The answer is milliseconds from
 * `now`: a date in the past is 0; a missing, empty or unreadable value is null (the caller then
 * uses its own back-off).
 */

const IMF_FIXDATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const RFC850_DATE = /^[A-Z][a-z]+, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT$/;
const ASCTIME_DATE = /^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;

export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | null {
  if (value === null || value === undefined) return null;
  const v = value.trim();
  if (/^\d{1,10}$/.test(v)) return Number(v) * 1000;
  let at = Number.NaN;
  if (IMF_FIXDATE.test(v) || RFC850_DATE.test(v)) at = Date.parse(v);
  else if (ASCTIME_DATE.test(v)) at = Date.parse(`${v.replace(/ +/g, ' ')} GMT`);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}
