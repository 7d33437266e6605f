import {
  AddDomainSchema,
  DomainErrorText,
  type DomainResponse,
  type ListDomainsResponse,
  PageQuerySchema,
  normalizeDomainName,
} from '@mailyard/contracts';
import { badRequest, conflict, createDnsResolver, notFound, parseOrThrow } from '@mailyard/platform';
import { DuplicateDomainError, domains } from '@mailyard/store';
import { type Request, Router } from 'express';
import { tenantOf } from '../auth/api-key-auth';
import { readPage } from '../paging/read-page';
import type { GatewayContext } from '../settings';
import { dnsSettings, expectedRecords, generateDkimKeyPair } from './dns-records';
import { domainParam } from './domain-param';
import { toDomainData } from './domain-view';
import { checkTiming, firstCheck, nextCheck } from './schedule';
import { checkDomainDns } from './verify-domain';

/**
 * Sending domains (docs/api/domains.md): add (DKIM key + DNS
 * records to publish), verify against DNS, details, list, delete.
 */
export function domainRoutes(
  ctx: Pick<GatewayContext, 'db' | 'config' | 'sealer'>,
  hooks: { onOutboxWrite?: () => void } = {},
): Router {
  const { db, config, sealer } = ctx;
  const settings = dnsSettings(config);
  const timing = checkTiming(config);
  const router = Router();

  router.post('/v1/domain/add', async (req, res) => {
    const input = parseOrThrow(AddDomainSchema, req.body);
    const name = normalizeDomainName(input.domain);
    if (!name) throw badRequest(DomainErrorText.invalidDomain);
    const { tenantId } = tenantOf(res);
    if (await domains.get(db, tenantId, name.ascii)) throw conflict(DomainErrorText.domainExists);
    const selector = input.selector ?? config.DKIM_SELECTOR;
    const ips = [...new Set(input.ips ?? [])];
    const key = await generateDkimKeyPair();
    const createdAt = new Date();
    try {
      const domain = await domains.create(db, tenantId, {
        name: name.ascii,
        unicodeName: name.unicode,
        selector,
        dkimPublicKey: key.publicKey,
        sealedPrivateKey: sealer.seal(key.privateKeyPem),
        customArgs: input.custom_args ?? null,
        isTenantDomain: input.is_tenant_domain ?? false,
        isTenantSubdomain: input.is_tenant_subdomain ?? false,
        sharedWithSubaccounts: input.shared_with_subaccounts ?? false,
        ips,
        records: expectedRecords({ name: name.ascii, selector, dkimPublicKey: key.publicKey, ips }, settings),
        createdAt,
        nextCheckAt: firstCheck(createdAt, timing).nextCheckAt,
      });
      res.status(201).json({
        success: true,
        message: 'Domain added; publish the DNS records, then verify the domain',
        data: toDomainData(domain),
      } satisfies DomainResponse);
    } catch (err) {
      if (err instanceof DuplicateDomainError) throw conflict(DomainErrorText.domainExists);
      throw err;
    }
  });

  router.put('/v1/domain/verify/:domain', async (req, res) => {
    const { tenantId } = tenantOf(res);
    const domain = await domains.get(db, tenantId, domainParam(req));
    if (!domain) throw notFound(DomainErrorText.domainNotFound);
    const now = new Date();
    const result = await checkDomainDns(createDnsResolver(config), domain, settings);
    const saved = await domains.saveCheck(
      db,
      tenantId,
      domain.id,
      { verified: result.verified, records: result.records, checkedAt: now },
      (before) => nextCheck(before, result.verified, now, timing, true),
      'always',
    );
    if (!saved) throw notFound(DomainErrorText.domainNotFound);
    hooks.onOutboxWrite?.();
    const failed = result.records
      .filter((r) => r.required && !r.verified)
      .map((r) => r.purpose.toUpperCase());
    res.json({
      success: true,
      message: result.verified
        ? 'Domain verified'
        : `Domain not verified: ${failed.join(' and ')} record check failed`,
      data: toDomainData(saved.domain),
    } satisfies DomainResponse);
  });

  router.get('/v1/domain/:domain', async (req, res) => {
    const domain = await domains.get(db, tenantOf(res).tenantId, domainParam(req));
    if (!domain) throw notFound(DomainErrorText.domainNotFound);
    res.json({ success: true, data: toDomainData(domain) } satisfies DomainResponse);
  });

  router.delete('/v1/domain/:domain', async (req, res) => {
    if (!(await domains.delete(db, tenantOf(res).tenantId, domainParam(req))))
      throw notFound(DomainErrorText.domainNotFound);
    res.json({ success: true, message: 'Domain deleted' });
  });

  router.get('/v1/domains', async (req, res) => {
    const query = parseOrThrow(PageQuerySchema, req.query);
    const page = await readPage(() => domains.list(db, tenantOf(res).tenantId, query));
    res.json({
      success: true,
      data: page.items.map(toDomainData),
      nextPageToken: page.nextCursor,
      totalCount: page.totalCount,
    } satisfies ListDomainsResponse);
  });

  // Path parameter missing: a 400 naming it rather than the bare 404 of an unknown route.
  router.all(['/v1/domain', '/v1/domain/verify'], (req, _res, next) => {
    if (req.method === 'GET' || req.method === 'DELETE' || req.method === 'PUT')
      throw badRequest(DomainErrorText.domainRequired);
    next();
  });

  return router;
}
