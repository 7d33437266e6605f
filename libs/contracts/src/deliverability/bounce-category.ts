/**
 * Bounce categories (docs/deliverability.md "Bounce categories"): `details.bounce_category` on
 * MAIL_BOUNCE and SMTP_ERROR says WHY a recipient's mail failed, so that only what proves the
 * address dead suppresses it. Only `invalid_recipient` suppresses (suppression reason
 * `hard_bounce`) and counts against a domain's or mailer's reputation as a bounce; `reputation`,
 * `content` and `policy` refusals are about the sender, never the recipient.
 */
export const BOUNCE_CATEGORIES = [
  'invalid_recipient',
  'mailbox_full',
  'reputation',
  'content',
  'policy',
  'dns',
  'tls',
  'rate_limited',
  'unknown',
] as const;
export type BounceCategory = (typeof BOUNCE_CATEGORIES)[number];

/** The one category that suppresses the address and counts as a bounce in reputation. */
export const SUPPRESSING_BOUNCE_CATEGORY: BounceCategory = 'invalid_recipient';
