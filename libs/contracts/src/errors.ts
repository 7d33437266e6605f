/** Error texts returned in `{success: false, error}`. The API contract's texts are verbatim (each route's are in docs/api/). */
export const ErrorText = {
  // the API contract's error messages
  nameRequired: 'name is required',
  subjectRequired: 'subject is required',
  contentRequired: 'content is required',
  templateNotFound: 'Template not found',
  templateIdRequired: 'Template ID is required',
  webhookEventsRequired: 'at least one of webhook_options.events must be true for EMAIL_EVENT',
  webhookOptionsForDomain: 'invalid webhook_options.events for DOMAIN_VERIFICATION',
  webhookExists: 'Webhook Already Exists',
  backfillActive: 'active history backfill already exists',
  // Mailyard's own texts where the spec is silent
  unauthorized: 'Invalid or missing API key',
  adminUnauthorized: 'Invalid or missing admin key',
  // Provider callbacks (tracking service, docs/providers.md "SparkPost callbacks")
  callbackUnauthorized: 'Invalid or missing callback credentials',
  callbackInvalidBatch: 'Invalid SparkPost event batch',
  rateLimited: 'Rate limit exceeded',
  notFound: 'Not found',
  malformedJson: 'Malformed JSON body',
  payloadTooLarge: 'Request body too large',
  unsupportedMediaType: 'Content-Type must be application/json',
  internal: 'Internal server error',
  starting: 'Service is starting: waiting for its database, bus or kv; retry shortly',
  // A dependency outage (503 with Retry-After); `details` names the dependency.
  unavailable: 'Service temporarily unavailable; retry later',
  databaseUnavailable: 'the database is not answering',
  kvUnavailable: 'the kv store (Redis) is not answering',
  busUnavailable: 'the message bus (RabbitMQ) is not answering',
  invalidPageToken: 'Invalid pageToken',
  invalidPageSize: 'pageSize must be an integer between 1 and 50',
  invalidRequest: 'Invalid request',
  tenantNotFound: 'Tenant not found',
  keyNotFound: 'API key not found',
  // Send API (POST /v1/email/send); field messages name their field, e.g. `to[0].email is required`
  fromRequired: 'from is required',
  toRequired: 'to is required',
  mailerIdRequired: 'mailer_id is required',
  mailerNotFound: 'Mailer not found',
  mailerDisabled: 'Mailer is disabled',
  mailerDeactivated: 'Mailer is deactivated',
  mailerCannotSend: 'Mailer cannot send email',
  domainNotVerified: 'Sending domain is not verified',
  fromDomainMismatch: 'from.email must be an address of the sending domain',
  tooManyRecipients: 'total recipients must be at most 1000',
  duplicateRecipient: 'each recipient may appear only once across to, cc and bcc',
  messageTooLarge: 'message size must be at most 30 MB',
  customArgsTooLarge: 'custom_args must be at most 10 KB when serialized',
  contentTypeTwice: 'content may hold at most one text/plain and one text/html value',
  idempotencyKeyInvalid: 'Idempotency-Key must be 1 to 255 printable ASCII characters',
  idempotencyKeyReused: 'Idempotency-Key was already used with a different request',
  idempotencyKeyInProgress: 'A request with this Idempotency-Key is being processed; retry later',
  // Logs and suppressions
  emailRequired: 'email is required',
  invalidEmail: 'email must be a valid email address',
  invalidDomain: 'domain must be a valid domain name',
  invalidStatus:
    'status must be one of QUEUED, FAILED, MAIL_DELIVERED, MAIL_OPENED, MAIL_CLICKED, MAIL_BOUNCE, MAIL_UNSUBSCRIBED',
  invalidRecipientType: 'recipientType must be one of to, cc, bcc',
} as const;

export type ErrorTextKey = keyof typeof ErrorText;
