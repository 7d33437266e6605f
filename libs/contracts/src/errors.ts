/** Error texts returned in `{success: false, error}`. SPEC.md's texts are verbatim. */
export const ErrorText = {
  // SPEC.md "Error messages"
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
  rateLimited: 'Rate limit exceeded',
  notFound: 'Not found',
  malformedJson: 'Malformed JSON body',
  payloadTooLarge: 'Request body too large',
  unsupportedMediaType: 'Content-Type must be application/json',
  internal: 'Internal server error',
  invalidPageToken: 'Invalid pageToken',
  invalidPageSize: 'pageSize must be an integer between 1 and 50',
  invalidRequest: 'Invalid request',
  tenantNotFound: 'Tenant not found',
  keyNotFound: 'API key not found',
} as const;

export type ErrorTextKey = keyof typeof ErrorText;
