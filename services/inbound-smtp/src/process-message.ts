/**
 * The processing of one stored message, as named steps (like Postal's message
 * processor): load (recovery path only; the MX hands the message it just stored from memory) -> split recipients (tenants' addresses / the service's own addresses on the
 * bounce domain) -> for tenants: check the header block (header-block.ts; over its limits each
 * recipient gets the error form, nothing parses it) -> authenticate -> build one INCOMING_EMAIL per recipient -> route
 * to the incoming domain's webhook; for the service's addresses: bounce / complaint / mailto
 * unsubscribe outcomes (service-mail.ts), DMARC / TLS-RPT reports (reports/report-mail.ts),
 * never posted -> hand to the dispatcher, write the outcomes and reports and mark processed
 * (one transaction).
 * Idempotent: a message already processed is skipped, so at-least-once bus delivery and a
 * crash between any two steps never post or record twice from here (the dispatcher retries posting):
 * the final statement marks the message processed and writes its deliveries only if it was still
 * `stored`, so the in-process path and a concurrent recovery of the same message post it once.
 * Tracing: one trace per accepted message, its id the message id's ULID (traceparentOfUlid), so
 * whichever path processes it logs under the same trace and each delivery carries a child span
 * of it: the receiver gets a `traceparent` header naming the message.
 */
import {
  INCOMING_EMAIL_EVENT,
  type IncomingEmailContext,
  type IncomingEmailPayload,
} from '@mailyard/contracts';
import {
  type Db,
  type Logger,
  type Queryable,
  buildIncomingEmails,
  childTraceparent,
  incomingEmailError,
  messageHeaderProblem,
  runWithTrace,
  traceparentOfUlid,
} from '@mailyard/platform';
import {
  type FeedbackOutcome,
  type InboundRecipient,
  type NewDelivery,
  type StoredInboundMessage,
  applyFeedbackIn,
  inboundMessages,
} from '@mailyard/store';
import type { InboundRoundTrips } from './group-commit';
import { isReportRecipient, reportMailWrite } from './reports/report-mail';
import { serviceMailOutcomes } from './service-mail';

/**
 * `mailer-service` of the MX's INCOMING_EMAIL: the spec's inbound routing is SparkPost's relay
 * webhook model (`POST /v1/inbound/relay_webhook`, `thread-id` "empty for SparkPost-style
 * providers"), so domain-routed mail says `sparkpost`, the value receivers written against the
 * spec expect for it (docs/inbound.md "The INCOMING_EMAIL object"). `smtp` named a send-only
 * mailer type.
 */
export const MX_MAILER_SERVICE = 'sparkpost';

export interface ProcessDeps {
  db: Db;
  logger: Logger;
  /** Authentication-Results value for the message, or null (see authenticate.ts). */
  authenticate(msg: StoredInboundMessage): Promise<string | null>;
  /** Key of the signed service addresses (libs/platform returnPathKey). */
  returnPathKey: Buffer;
  /** Called after outcomes were committed (wakes the outbox relay that publishes the events). */
  afterCommit?: () => void;
  /**
   * The message's read and its final statement shared with the other messages in work
   * (group-commit.ts); without it, one round trip each.
   */
  roundTrips?: Pick<InboundRoundTrips, 'load' | 'complete'>;
}

/** Recovery path (bus announcement, recovery sweep): loads the stored message, then processes it. */
export async function processInboundMessage(
  deps: ProcessDeps,
  messageId: string,
): Promise<'processed' | 'skipped'> {
  const message = await loadMessage(deps, messageId);
  if (!message) return 'skipped';
  return processStoredMessage(deps, message);
}

/**
 * In-process path: the message the MX just stored, from memory (no reload). Safe beside the
 * recovery path: whichever finishes first marks it processed, the other's statement writes nothing.
 */
export function processStoredMessage(
  deps: ProcessDeps,
  message: StoredInboundMessage,
): Promise<'processed' | 'skipped'> {
  const traceparent = traceparentOfUlid(message.id.slice(message.id.indexOf('_') + 1));
  return runWithTrace({ traceparent }, () => processTraced(deps, message, traceparent));
}

async function processTraced(
  deps: ProcessDeps,
  message: StoredInboundMessage,
  traceparent: string,
): Promise<'processed' | 'skipped'> {
  const { tenants, service } = splitRecipients(message.recipients);
  const deliveries = tenants.length > 0 ? await incomingDeliveries(deps, message, tenants, traceparent) : [];
  const feedback = service.filter((r) => !isReportRecipient(r));
  const outcomes =
    feedback.length > 0
      ? await serviceMailOutcomes(
          { db: deps.db, logger: deps.logger, key: deps.returnPathKey },
          message,
          feedback,
        )
      : [];
  // DMARC / TLS-RPT reports (reports/report-mail.ts), stored in the same completing transaction.
  const reports = service.filter(isReportRecipient);
  const storeReports = reports.length > 0 ? await reportMailWrite(deps, message, reports) : null;
  const effects =
    outcomes.length > 0 || storeReports
      ? async (tx: Queryable) => {
          await writeOutcomes(tx, outcomes);
          await storeReports?.(tx);
        }
      : undefined;
  const done =
    !effects && deps.roundTrips
      ? await deps.roundTrips.complete(message.id, deliveries)
      : await inboundMessages.complete(deps.db, message.id, deliveries, effects);
  if (done && outcomes.length > 0) deps.afterCommit?.();
  deps.logger.info('inbound message processed', {
    inbound_message_id: message.id,
    recipients: message.recipients.length,
    handed_over: done,
  });
  return done ? 'processed' : 'skipped';
}

function splitRecipients(all: InboundRecipient[]): {
  tenants: InboundRecipient[];
  service: InboundRecipient[];
} {
  return { tenants: all.filter((r) => !r.service), service: all.filter((r) => r.service) };
}

async function incomingDeliveries(
  deps: ProcessDeps,
  message: StoredInboundMessage,
  recipients: InboundRecipient[],
  traceparent: string,
): Promise<NewDelivery[]> {
  // The MX refuses such a header block at DATA; one stored before that check (or by hand) is
  // never parsed: each recipient gets the spec's error form naming the limit.
  const problem = messageHeaderProblem(message.raw);
  if (problem)
    return routeToWebhooks(
      recipients.map((recipient) => ({
        recipient,
        payload: incomingEmailError(problem, contextOf(recipient)),
      })),
      traceparent,
    );
  const authResults = await deps.authenticate(message);
  return routeToWebhooks(await buildPayloads(message, recipients, authResults), traceparent);
}

/**
 * `webhook-id` is the id of the webhook configuration that receives the event, in the form of
 * the service's webhook ids (`<prefix>_<ulid>`, never a name): a domain's incoming webhook has
 * one per sending domain, so it is the domain's id `domain_<ulid>` (also its `mailer-id`), as
 * the mailbox readers use the mailer id for a mailer's incoming webhook. The Standard Webhooks
 * request header `webhook-id` is the delivery's own id (unique per delivery, the same on every
 * retry), set by the dispatcher.
 */
const contextOf = (recipient: InboundRecipient): IncomingEmailContext => ({
  recipient: recipient.address,
  webhookId: recipient.mailerId,
  mailerId: recipient.mailerId,
  mailerService: MX_MAILER_SERVICE,
  labelIds: [],
});

async function writeOutcomes(tx: Queryable, outcomes: FeedbackOutcome[]): Promise<void> {
  for (const o of outcomes) await applyFeedbackIn(tx, o);
}

async function loadMessage(deps: ProcessDeps, id: string): Promise<StoredInboundMessage | null> {
  const message = deps.roundTrips ? await deps.roundTrips.load(id) : await inboundMessages.get(deps.db, id);
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

/** One event per recipient (each recipient of a transaction gets its own; docs/inbound.md), one parse. */
async function buildPayloads(
  message: StoredInboundMessage,
  recipients: InboundRecipient[],
  authResults: string | null,
): Promise<RecipientPayload[]> {
  const payloads = await buildIncomingEmails(message.raw, recipients.map(contextOf));
  return payloads.map((payload, i) => {
    if (payload.success && authResults) {
      payload.details.headers['Authentication-Results'] = [
        authResults,
        ...(payload.details.headers['Authentication-Results'] ?? []),
      ];
    }
    return { recipient: recipients[i]!, payload };
  });
}

/**
 * Single object to the domain's configured url/method/headers (read by the dispatcher at each
 * attempt), each delivery a child span of the message's trace (its `traceparent` header).
 */
function routeToWebhooks(payloads: RecipientPayload[], traceparent: string): NewDelivery[] {
  return payloads.map(({ recipient, payload }) => ({
    tenantId: recipient.tenantId,
    targetKind: 'inbound',
    webhookId: recipient.domain,
    eventTypes: [INCOMING_EMAIL_EVENT],
    body: JSON.stringify(payload),
    traceparent: childTraceparent(traceparent),
  }));
}
