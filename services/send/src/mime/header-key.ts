/**
 * The casing rule of header names, the one nodemailer's MimeNode applies to every header it
 * writes (so the names in our messages stay exactly as they were): drop what a field name cannot
 * hold (whitespace, controls, DEL, `:`), lowercase, then capitalise each word, with the
 * exceptions `MIME`, `DKIM`, `ARC`, `BIMI` and `X-SMTPAPI` (upper case), `OTP-Token`, the
 * suffixes `-SPF`, `-FBL`, `-ID`, `-MD5`, and `Content-features`.
 *
 * Why our own: the same dozen names are normalised for every copy, and a chain of regular
 * expressions per header was about a tenth of the CPU of building a small message. Here the
 * result is kept in a bounded cache (a pure function of the name); names beyond the bound
 * (tenants' custom headers) are computed each time.
 */
export const MAX_CACHED_KEYS = 1000;

const cache = new Map<string, string>();

function computeHeaderKey(name: string): string {
  return (
    name
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters a field name cannot hold
      .replace(/[\s\x00-\x20\x7f:]/g, '')
      .toLowerCase()
      .replace(
        /^X-SMTPAPI$|^(MIME|DKIM|ARC|BIMI)\b|^OTP(?=-Token$)|^[a-z]|-(SPF|FBL|ID|MD5)$|-[a-z]/gi,
        (c) => c.toUpperCase(),
      )
      .replace(/^Content-Features$/i, 'Content-features')
  );
}

/** `name` as it is written in a message header (`message-id` -> `Message-ID`). */
export function normalizeHeaderKey(name: string): string {
  let key = cache.get(name);
  if (key === undefined) {
    key = computeHeaderKey(name);
    if (cache.size < MAX_CACHED_KEYS) cache.set(name, key);
  }
  return key;
}
