import {
  DeliveriesQuerySchema,
  ErrorText,
  IdPrefix,
  type ListDeliveriesResponse,
  type ListWebhooksResponse,
  type RegisterWebhookResponse,
  RegisterWebhookSchema,
  UpdateWebhookSchema,
  WebhookErrorText,
  WebhookEventBodySchema,
  checkWebhookOptions,
  newId,
  parseWebhookBody,
} from '@mailyard/contracts';
import { badRequest, conflict, notFound, unprocessable } from '@mailyard/platform';
import {
  loadInboundWebhook,
  loadMailerWebhook,
  loadWebhookById,
  webhookDeliveries,
  webhooks,
} from '@mailyard/store';
import { Router } from 'express';
import type { z } from 'zod';
import { tenantOf } from '../auth/api-key-auth';
import { readPage } from '../paging/read-page';
import { keyLimit } from '../rate-limit/key-limit';
import type { GatewayContext } from '../settings';
import { checkUrlUpdate } from './headers-destination';
import { newSigningSecret } from './signing-secret';
import { checkWebhookUrl, sealHeaders, urlCheckOptions } from './url-check';

const body = <T extends z.ZodTypeAny>(schema: T, input: unknown): z.output<T> => {
  const r = parseWebhookBody(schema, input);
  if (!r.success) throw badRequest(r.error);
  return r.data;
};

/**
 * docs/api/webhooks.md: register, update (also `active`), list, delete; plus
 * signing-secret rotation and the deliveries list/replay (docs/webhooks.md). The field rules
 * and their messages; header values and the secret are sealed, never returned (the secret once, at
 * register and rotation). Stored headers follow a URL change only within its origin
 * (headers-destination.ts); replays share the original's body and are limited per delivery
 * (WEBHOOK_REPLAY_LIMIT per WEBHOOK_REPLAY_WINDOW_SECONDS).
 */
export function webhookRoutes(ctx: GatewayContext): Router {
  const { db, sealer, config } = ctx;
  const router = Router();
  const urlCheck = urlCheckOptions(config);
  const replayLimit = keyLimit(ctx.kv, ctx.logger, {
    limit: config.WEBHOOK_REPLAY_LIMIT,
    windowMs: config.WEBHOOK_REPLAY_WINDOW_SECONDS * 1000,
    message: WebhookErrorText.replayLimited(
      config.WEBHOOK_REPLAY_LIMIT,
      config.WEBHOOK_REPLAY_WINDOW_SECONDS,
    ),
  });

  router.post('/v1/webhook/register', async (req, res) => {
    const input = body(RegisterWebhookSchema, req.body);
    const options = checkWebhookOptions(input.event, input.webhook_options, true);
    if (!options.ok) throw badRequest(options.error);
    const tenantId = tenantOf(res).tenantId;
    // Rule 4 first: a duplicate is refused without probing the URL again.
    if (await webhooks.get(db, tenantId, input.event)) throw conflict(ErrorText.webhookExists);
    const url = await checkWebhookUrl(input.webhook_url, urlCheck);
    const id = newId(input.event === 'EMAIL_EVENT' ? IdPrefix.emailEventsWebhook : IdPrefix.domain);
    const secret = newSigningSecret();
    const headers = sealHeaders(sealer, input.headers ?? {});
    const created = await webhooks.create(db, tenantId, {
      id,
      event: input.event,
      url,
      events: options.events,
      headerNames: headers.names,
      headersSealed: headers.sealed,
      secretSealed: sealer.seal(secret),
    });
    if (created === 'exists') throw conflict(ErrorText.webhookExists);
    res.status(201).json({
      success: true,
      message: 'Webhook registered',
      webhook_id: id,
      signing_secret: secret,
    } satisfies RegisterWebhookResponse);
  });

  router.put('/v1/webhook/update', async (req, res) => {
    const input = body(UpdateWebhookSchema, req.body);
    const options = checkWebhookOptions(input.event, input.webhook_options, false);
    if (!options.ok) throw badRequest(options.error);
    const tenantId = tenantOf(res).tenantId;
    const stored = await webhooks.get(db, tenantId, input.event);
    if (!stored) throw notFound(WebhookErrorText.webhookNotFound);
    const url = await checkUrlUpdate(
      { url: stored.url, headers: stored.headers_present.length > 0 },
      { url: input.webhook_url, headers: input.headers !== undefined },
      { field: 'headers', urlField: 'webhook_url' },
      urlCheck,
    );
    const updated = await webhooks.update(db, tenantId, input.event, {
      url,
      ...(options.events ? { events: options.events } : {}),
      ...(input.headers !== undefined ? { headers: sealHeaders(sealer, input.headers) } : {}),
      active: input.active,
    });
    if (!updated) throw notFound(WebhookErrorText.webhookNotFound);
    res.json({ success: true, message: 'Webhook updated' });
  });

  router.get('/v1/webhook', async (_req, res) => {
    const list = await webhooks.list(db, tenantOf(res).tenantId);
    res.json({ success: true, webhooks: list } satisfies ListWebhooksResponse);
  });

  router.delete('/v1/webhook/delete', async (req, res) => {
    const { event } = body(WebhookEventBodySchema, req.body);
    if (!(await webhooks.delete(db, tenantOf(res).tenantId, event)))
      throw notFound(WebhookErrorText.webhookNotFound);
    res.json({ success: true, message: 'Webhook deleted' });
  });

  router.post('/v1/webhook/rotate-secret', async (req, res) => {
    const { event } = body(WebhookEventBodySchema, req.body);
    const secret = newSigningSecret();
    if (!(await webhooks.setSecret(db, tenantOf(res).tenantId, event, sealer.seal(secret))))
      throw notFound(WebhookErrorText.webhookNotFound);
    res.json({ success: true, message: 'Signing secret rotated', signing_secret: secret });
  });

  router.get('/v1/webhook/deliveries', async (req, res) => {
    const query = body(DeliveriesQuerySchema, req.query);
    const page = await readPage(() => webhookDeliveries.list(db, tenantOf(res).tenantId, query));
    res.json({
      success: true,
      data: page.items,
      nextPageToken: page.nextCursor,
      totalCount: page.totalCount,
    } satisfies ListDeliveriesResponse);
  });

  router.get('/v1/webhook/deliveries/:id', async (req, res) => {
    const d = await webhookDeliveries.get(db, tenantOf(res).tenantId, req.params.id!);
    if (!d) throw notFound(WebhookErrorText.deliveryNotFound);
    res.json({ success: true, data: d });
  });

  router.post('/v1/webhook/deliveries/:id/replay', async (req, res) => {
    const tenantId = tenantOf(res).tenantId;
    const target = await webhookDeliveries.target(db, tenantId, req.params.id!);
    if (!target) throw notFound(WebhookErrorText.deliveryNotFound);
    if (target.targetKind === 'webhook') {
      const hook = await loadWebhookById(db, sealer, tenantId, target.webhookId);
      if (!hook) throw unprocessable(WebhookErrorText.deliveryWebhookGone);
      if (!hook.active) throw unprocessable(WebhookErrorText.deliveryWebhookInactive);
    } else if (target.targetKind === 'inbound') {
      if (!(await loadInboundWebhook(db, sealer, tenantId, target.webhookId)))
        throw unprocessable(WebhookErrorText.deliveryWebhookGone);
    } else if (!(await loadMailerWebhook(db, sealer, tenantId, target.webhookId))) {
      throw unprocessable(WebhookErrorText.deliveryWebhookGone);
    }
    // Counted per stored body: a replay of a replay uses up the same budget.
    await replayLimit(`webhook-replay:${tenantId}:${target.bodyOf}`);
    const id = await webhookDeliveries.replay(db, tenantId, req.params.id!);
    if (!id) throw notFound(WebhookErrorText.deliveryNotFound);
    res.status(201).json({ success: true, message: 'Delivery queued for replay', delivery_id: id });
  });

  return router;
}
