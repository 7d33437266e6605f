import { MailerErrorText, type WebhookConfig } from '@mailyard/contracts';
import { type Db, type Sealer, badRequest } from '@mailyard/platform';
import { type MailerPatch, type MailerWebhookInfo, loadMailerWebhook } from '@mailyard/store';
import { assertHeadersFollowUrl } from '../webhooks/headers-destination';

/**
 * An IMAP mailer's incoming webhook as stored: url, method and header names in the clear, the
 * header values (often credentials) sealed. https only, unless WEBHOOK_ALLOW_INSECURE also allows
 * http. Headers follow the rule of every webhook (contracts validation/webhook-headers.ts, checked
 * by the request schema).
 */
export function sealWebhook(
  input: WebhookConfig,
  sealer: Sealer,
  allowInsecure: boolean,
): { info: MailerWebhookInfo; sealedHeaders: Buffer | null } {
  assertWebhookProtocol(input.url, allowInsecure);
  const headers = input.headers ?? {};
  const names = Object.keys(headers);
  return {
    info: { url: input.url, method: input.method, headers_present: names },
    sealedHeaders: names.length > 0 ? sealer.seal(JSON.stringify(headers)) : null,
  };
}

function assertWebhookProtocol(url: string, allowInsecure: boolean): void {
  const protocol = new URL(url).protocol;
  if (protocol !== 'https:' && !(allowInsecure && protocol === 'http:'))
    throw badRequest(MailerErrorText.invalidWebhook);
}

/**
 * The incoming webhook a PUT /v1/mailer/imap sets: undefined leaves it, null removes it, an
 * object replaces it. Without `headers` the stored headers stay, but only for the same origin: a
 * new scheme, host or port needs them again (400; headers-destination.ts, docs/architecture.md, security 7).
 */
export async function webhookForUpdate(
  deps: { db: Db; sealer: Sealer; allowInsecure: boolean },
  tenantId: string,
  mailerId: string,
  input: WebhookConfig | null | undefined,
): Promise<MailerPatch['webhook']> {
  if (input === undefined || input === null) return input;
  assertWebhookProtocol(input.url, deps.allowInsecure);
  if (input.headers !== undefined) return sealWebhook(input, deps.sealer, deps.allowInsecure);
  const stored = await loadMailerWebhook(deps.db, deps.sealer, tenantId, mailerId);
  const headers = stored?.headers ?? {};
  if (stored)
    assertHeadersFollowUrl({
      storedUrl: stored.url,
      nextUrl: input.url,
      storedHeaders: Object.keys(headers).length > 0,
      headersGiven: false,
      field: 'webhook.headers',
      urlField: 'webhook.url',
    });
  return sealWebhook({ ...input, headers }, deps.sealer, deps.allowInsecure);
}
