/**
 * Turns account batches of bus events into persisted deliveries. Every batch flushed at the same
 * moment (any number of accounts: with WEBHOOK_BATCH_MAX=1 each event is a batch of its own) is
 * stored together: the accounts' webhooks in one query, routing (route-event.ts), and every
 * planned delivery in one INSERT. Only after that commit are the batches' bus messages
 * acknowledged; a failed store fails every batch in it (their messages are retried).
 */
import { isImapCapable } from '@mailyard/contracts';
import type { Queryable, Sealer } from '@mailyard/platform';
import { type NewDelivery, insertDeliveries, loadMailerWebhook, loadWebhookRoutes } from '@mailyard/store';
import { type AccountWebhooks, type DispatchEvent, routeEvents } from './route-event';

export interface AccountBatch {
  tenantId: string;
  events: DispatchEvent[];
}

/** Stores the deliveries of these batches in one statement; returns the ids of the new deliveries. */
export async function flushAccounts(
  deps: { db: Queryable; sealer: Sealer; maxPerBody?: number },
  batches: readonly AccountBatch[],
): Promise<string[]> {
  const { db, sealer, maxPerBody } = deps;
  const routes = await loadWebhookRoutes(
    db,
    batches.map((b) => b.tenantId),
  );
  const rows: NewDelivery[] = [];
  for (const { tenantId, events } of batches) {
    const hooks = routes.get(tenantId) ?? [];
    const email = hooks.find((h) => h.event === 'EMAIL_EVENT') ?? null;
    const domain = hooks.find((h) => h.event === 'DOMAIN_VERIFICATION') ?? null;
    const mailerIds = new Set(
      events.flatMap((e) => {
        if (e.kind === 'mailer-object') return [e.message.mailer_id];
        return e.kind === 'mailer' && isImapCapable(e.event.details.config_type)
          ? [e.event.details.mailer_id]
          : [];
      }),
    );
    const mailerWebhooks = new Set<string>();
    for (const id of mailerIds) if (await loadMailerWebhook(db, sealer, tenantId, id)) mailerWebhooks.add(id);
    const account: AccountWebhooks = {
      emailEvent: email ? { id: email.id, active: email.active, events: email.events } : null,
      domainVerification: domain ? { id: domain.id, active: domain.active, events: null } : null,
      mailerWebhooks,
    };
    for (const p of routeEvents(events, account, maxPerBody))
      rows.push({
        tenantId,
        targetKind: p.targetKind,
        webhookId: p.webhookId,
        eventTypes: p.eventTypes,
        body: JSON.stringify(p.body),
        ...(p.traceparent ? { traceparent: p.traceparent } : {}),
        ...(p.extraHeaders ? { extraHeaders: p.extraHeaders } : {}),
      });
  }
  return insertDeliveries(db, rows);
}
