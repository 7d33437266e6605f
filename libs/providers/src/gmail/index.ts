export * from './gmail-client';
export { classifyGmailError } from './gmail-errors';
export { type GmailListQuery, gmailListParams, inGmailWindow } from './gmail-query';
