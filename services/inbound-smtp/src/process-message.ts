/**
 * The bus consumer's processing of one stored message, as named steps (like Postal's message
 * processor): load -> authenticate -> build one INCOMING_EMAIL per recipient -> route to the
 * incoming domain's webhook -> hand to the dispatcher and mark processed (one transaction).
 * Idempotent: a message already processed is skipped, so at-least-once bus delivery and a
 * crash between any two steps never post twice from here (the dispatcher retries posting).
 */
import { INCOMING_EMAIL_EVENT, type IncomingEmailPayload } from '@mailyard/contracts';
import { type Db, type Logger, buildIncomingEmail } from '@mailyard/platform';
import {
  type InboundRecipient,
  type NewDelivery,
  type StoredInboundMessage,
  inboundMessages,
} from '@mailyard/store';

export interface ProcessDeps {
  db: Db;
  logger: Logger;
  /** Authentication-Results value for the message, or null (see authenticate.ts). */
  authenticate(msg: StoredInboundMessage): Promise<string | null>;
}

export async function processInboundMessage(
  deps: ProcessDeps,
  messageId: string,
): Promise<'processed' | 'skipped'> {
  const message = await loadMessage(deps, messageId);
  if (!message) return 'skipped';
  const authResults = await deps.authenticate(message);
  const payloads = await buildPayloads(message, authResults);
  const deliveries = routeToWebhooks(payloads);
  const done = await inboundMessages.complete(deps.db, message.id, deliveries);
  deps.logger.info('inbound message processed', {
    inbound_message_id: message.id,
    recipients: message.recipients.length,
    handed_over: done,
  });
  return done ? 'processed' : 'skipped';
}

async function loadMessage(deps: ProcessDeps, id: string): Promise<StoredInboundMessage | null> {
  const message = await inboundMessages.get(deps.db, id);
  if (!message) {
    deps.logger.warn('inbound message not found', { inbound_message_id: id });
    return null;
  }
  return message.status === 'stored' ? message : null;
}

interface RecipientPayload {
  recipient: InboundRecipient;
  payload: IncomingEmailPayload;
}

/** One event per recipient (SPEC.md: each recipient of a transaction gets its own). */
async function buildPayloads(
  message: StoredInboundMessage,
  authResults: string | null,
): Promise<RecipientPayload[]> {
  const out: RecipientPayload[] = [];
  for (const recipient of message.recipients) {
    const payload = await buildIncomingEmail(message.raw, {
      recipient: recipient.address,
      webhookId: recipient.domain,
      mailerId: recipient.mailerId,
      mailerService: 'smtp',
      labelIds: [],
    });
    if (payload.success && authResults) {
      payload.details.headers['Authentication-Results'] = [
        authResults,
        ...(payload.details.headers['Authentication-Results'] ?? []),
      ];
    }
    out.push({ recipient, payload });
  }
  return out;
}

/** Single object to the domain's configured url/method/headers (read by the dispatcher at each attempt). */
function routeToWebhooks(payloads: RecipientPayload[]): NewDelivery[] {
  return payloads.map(({ recipient, payload }) => ({
    tenantId: recipient.tenantId,
    targetKind: 'inbound',
    webhookId: recipient.domain,
    eventTypes: [INCOMING_EMAIL_EVENT],
    body: JSON.stringify(payload),
  }));
}
