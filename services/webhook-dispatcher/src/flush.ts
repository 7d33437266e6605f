/**
 * Turns one account's batch of bus events into persisted deliveries: loads the account's
 * webhooks (one query), routes (route-event.ts) and inserts every planned delivery in one
 * statement. Only after that commit are the batch's bus messages acknowledged.
 */
import { isImapCapable } from '@mailyard/contracts';
import type { Queryable, Sealer } from '@mailyard/platform';
import { insertDeliveries, loadMailerWebhook, loadWebhookRoutes } from '@mailyard/store';
import { type AccountWebhooks, type DispatchEvent, routeEvents } from './route-event';

export async function flushAccount(
  deps: { db: Queryable; sealer: Sealer },
  tenantId: string,
  events: DispatchEvent[],
): Promise<string[]> {
  const { db, sealer } = deps;
  const hooks = await loadWebhookRoutes(db, tenantId);
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
  const planned = routeEvents(events, account);
  return insertDeliveries(
    db,
    planned.map((p) => ({
      tenantId,
      targetKind: p.targetKind,
      webhookId: p.webhookId,
      eventTypes: p.eventTypes,
      body: JSON.stringify(p.body),
      ...(p.traceparent ? { traceparent: p.traceparent } : {}),
      ...(p.extraHeaders ? { extraHeaders: p.extraHeaders } : {}),
    })),
  );
}
