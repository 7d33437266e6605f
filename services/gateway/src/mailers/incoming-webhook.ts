import { MailerErrorText, type WebhookConfig } from '@mailyard/contracts';
import { type Sealer, badRequest } from '@mailyard/platform';
import type { MailerWebhookInfo } from '@mailyard/store';

/**
 * An IMAP mailer's incoming webhook as stored: url, method and header names in the clear, the
 * header values (often credentials) sealed. https only, unless WEBHOOK_ALLOW_INSECURE also allows http.
 */
export function sealWebhook(
  input: WebhookConfig,
  sealer: Sealer,
  allowInsecure: boolean,
): { info: MailerWebhookInfo; sealedHeaders: Buffer | null } {
  const protocol = new URL(input.url).protocol;
  if (protocol !== 'https:' && !(allowInsecure && protocol === 'http:'))
    throw badRequest(MailerErrorText.invalidWebhook);
  const headers = input.headers ?? {};
  const names = Object.keys(headers);
  return {
    info: { url: input.url, method: input.method, headers_present: names },
    sealedHeaders: names.length > 0 ? sealer.seal(JSON.stringify(headers)) : null,
  };
}
