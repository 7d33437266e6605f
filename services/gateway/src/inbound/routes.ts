import {
  CreateInboundUsernameSchema,
  INBOUND_HEADER_MASK,
  INBOUND_USERNAME,
  type InboundDomainResponse,
  InboundErrorText,
  type InboundUsernamesResponse,
  RelayWebhookSchema,
  UpdateInboundDomainSchema,
  UpdateInboundUsernameSchema,
  normalizeDomainName,
  parseWebhookBody,
} from '@mailyard/contracts';
import { type Queryable, badRequest, conflict, notFound, unprocessable } from '@mailyard/platform';
import { domains, inboundAddresses, inboundDomains } from '@mailyard/store';
import { Router } from 'express';
import type { z } from 'zod';
import { tenantOf } from '../auth/api-key-auth';
import type { GatewayContext } from '../settings';
import { checkUrlUpdate } from '../webhooks/headers-destination';
import { checkWebhookUrl, sealHeaders, urlCheckOptions } from '../webhooks/url-check';

const body = <T extends z.ZodTypeAny>(schema: T, input: unknown): z.output<T> => {
  const r = parseWebhookBody(schema, input);
  if (!r.success) throw badRequest(r.error);
  return r.data;
};

const domainName = (raw: unknown): string => {
  if (typeof raw !== 'string' || !raw) throw badRequest(InboundErrorText.domainRequired);
  const name = normalizeDomainName(raw);
  if (!name) throw badRequest(InboundErrorText.domainInvalid);
  return name.ascii;
};

/** A full address `local@domain` from the path: the local part under the username rules. */
const addressParam = (raw: unknown): { username: string; domain: string } => {
  const value = typeof raw === 'string' ? raw : '';
  const at = value.lastIndexOf('@');
  const local = at > 0 ? value.slice(0, at) : '';
  const domain = at > 0 ? normalizeDomainName(value.slice(at + 1)) : null;
  if (!INBOUND_USERNAME.test(local) || !domain) throw badRequest(InboundErrorText.usernameInvalid);
  return { username: local.toLowerCase(), domain: domain.ascii };
};

/**
 * docs/api/inbound.md: where an incoming domain's mail is posted and which addresses accept mail.
 * The domain must be a verified sending domain of the tenant (422 otherwise, 404 for a domain
 * that is not the tenant's at all); URL rules and header rules are the webhooks' (same check);
 * header values are sealed and GET shows them masked. Another tenant's domain reads as 404.
 */
export function inboundRoutes(ctx: GatewayContext): Router {
  const { db, sealer, config } = ctx;
  const router = Router();
  const urlCheck = urlCheckOptions(config);
  const requireVerified = async (q: Queryable, tenantId: string, domain: string) => {
    const sending = await domains.get(q, tenantId, domain);
    if (!sending) throw notFound(InboundErrorText.domainNotFound);
    if (!sending.verified) throw unprocessable(InboundErrorText.domainNotVerified);
  };
  const requireIncoming = async (tenantId: string, domain: string) => {
    const row = await inboundDomains.get(db, tenantId, domain);
    if (!row) throw notFound(InboundErrorText.domainNotFound);
    return row;
  };

  router.post('/v1/inbound/relay_webhook', async (req, res) => {
    const input = body(RelayWebhookSchema, req.body);
    const domain = domainName(input.domain);
    const { tenantId } = tenantOf(res);
    await requireVerified(db, tenantId, domain);
    if (await inboundDomains.get(db, tenantId, domain)) throw conflict(InboundErrorText.domainExists);
    const url = await checkWebhookUrl(input.url, urlCheck);
    const headers = sealHeaders(sealer, input.headers ?? {});
    const created = await inboundDomains.create(db, {
      tenantId,
      domain,
      url,
      method: input.method,
      headerNames: headers.names,
      headersSealed: headers.sealed,
    });
    if (created === 'exists') throw conflict(InboundErrorText.domainExists);
    res.json({ success: true, message: 'Incoming domain configured' });
  });

  router.put('/v1/inbound/update/:domain', async (req, res) => {
    const domain = domainName(req.params.domain);
    const input = body(UpdateInboundDomainSchema, req.body);
    const { tenantId } = tenantOf(res);
    const stored = await requireIncoming(tenantId, domain);
    const url = await checkUrlUpdate(
      { url: stored.url, headers: stored.headerNames.length > 0 },
      { url: input.url, headers: input.headers !== undefined },
      { field: 'headers', urlField: 'url' },
      urlCheck,
    );
    const updated = await inboundDomains.update(db, tenantId, domain, {
      url,
      method: input.method,
      ...(input.headers !== undefined ? { headers: sealHeaders(sealer, input.headers) } : {}),
      wildcard: input.wildcard,
    });
    if (!updated) throw notFound(InboundErrorText.domainNotFound);
    res.json({ success: true, message: 'Incoming domain updated' });
  });

  router.get('/v1/inbound/username/:domain', async (req, res) => {
    const domain = domainName(req.params.domain);
    const { tenantId } = tenantOf(res);
    await requireIncoming(tenantId, domain);
    const emails = await inboundAddresses.list(db, tenantId, domain);
    res.json({ success: true, emails } satisfies InboundUsernamesResponse);
  });

  router.get('/v1/inbound/:domain', async (req, res) => {
    const row = await requireIncoming(tenantOf(res).tenantId, domainName(req.params.domain));
    res.json({
      domain: row.domain,
      url: row.url,
      method: row.method,
      headers: Object.fromEntries(row.headerNames.map((n) => [n, INBOUND_HEADER_MASK])),
      wildcard: row.wildcard,
    } satisfies InboundDomainResponse);
  });

  router.post('/v1/inbound/username', async (req, res) => {
    const input = body(CreateInboundUsernameSchema, req.body);
    const domain = domainName(input.domain);
    const { tenantId } = tenantOf(res);
    await requireIncoming(tenantId, domain);
    const created = await inboundAddresses.create(db, tenantId, domain, input.user_name);
    if (created === 'exists') throw conflict(InboundErrorText.usernameExists);
    res.json({ success: true, message: 'Incoming email address created' });
  });

  router.put('/v1/inbound/username/update/:username', async (req, res) => {
    const address = addressParam(req.params.username);
    const input = body(UpdateInboundUsernameSchema, req.body);
    const domain = domainName(input.domain);
    if (domain !== address.domain) throw badRequest(InboundErrorText.usernameDomainMismatch);
    const { tenantId } = tenantOf(res);
    await requireIncoming(tenantId, domain);
    const updated = await inboundAddresses.update(db, tenantId, domain, address.username, {
      active: input.active,
      strictReplies: input.strict_replies,
    });
    if (!updated) throw notFound(InboundErrorText.usernameNotFound);
    res.json({ success: true, message: 'Incoming email address updated' });
  });

  return router;
}
