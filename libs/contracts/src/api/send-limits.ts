/** Limits of one POST /v1/email/send (docs/api/send.md). */
export const SEND_LIMITS = {
  /** Deliveries per request: to+cc+bcc, or with substitutions copies x (1 + cc + bcc). */
  maxRecipients: 1000,
  /** Decoded attachments plus the UTF-8 bytes of every body. */
  maxMessageBytes: 30 * 1024 * 1024,
  /** `custom_args` serialized as JSON. */
  maxCustomArgsBytes: 10 * 1024,
  maxNameLength: 256,
  maxSubjectLength: 998,
  maxIdLength: 255,
  maxHeaders: 100,
  maxHeaderNameLength: 100,
  maxHeaderValueLength: 8192,
  maxFilenameLength: 255,
} as const;
