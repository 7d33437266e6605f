/**
 * Sender reputation over HTTP (docs/api/domains.md "Reputation", docs/deliverability.md
 * "Reputation and automatic pause"): GET /v1/domain/{domain}/reputation (any key that may read)
 * and POST /v1/domain/{domain}/resume (a `full` key; audited as `resume`). Tenant-scoped: a domain
 * the tenant neither registered nor sent from is 404, another tenant's included. Resuming a domain
 * that is not paused is a 200 that changes nothing ("Sending was not paused"). A mailer's pause is
 * resumed by POST /v1/mailer/{id}/enable (mailers/mailer-changes.ts).
 */
import {
  DomainErrorText,
  type DomainReputation,
  type DomainReputationResponse,
  type ReputationPause,
  type ReputationSettings,
  normalizeDomainName,
  pausedMessage,
  rateOf,
} from '@mailyard/contracts';
import { type Queryable, badRequest, notFound, reputationSettingsOf } from '@mailyard/platform';
import {
  type OpenPause,
  type ScopeReputation,
  domains,
  hasSentFrom,
  mailersOfDomain,
  resumeSending,
  scopeReputation,
} from '@mailyard/store';
import { type Request, Router } from 'express';
import { tenantOf } from '../auth/api-key-auth';
import type { GatewayContext } from '../settings';
import { domainParam } from './domain-param';

const pauseView = (p: OpenPause | null): ReputationPause | null =>
  p && {
    scope: p.scope,
    metric: p.metric,
    rate: p.rate,
    window: p.window,
    threshold: p.threshold,
    paused_at: p.pausedAt,
    message: pausedMessage(p),
  };

const countsView = (r: ScopeReputation) => ({
  sent: r.sent,
  invalid_recipient_bounces: r.invalidRecipientBounces,
  complaints: r.complaints,
  bounce_rate: rateOf(r.invalidRecipientBounces, r.sent),
  complaint_rate: rateOf(r.complaints, r.sent),
  paused: pauseView(r.paused),
});

/** The domain's reputation, or 404 when the tenant has no such domain and never sent from it. */
async function domainReputation(
  db: Queryable,
  tenantId: string,
  domain: string,
  s: ReputationSettings,
): Promise<DomainReputation> {
  if (!(await domains.get(db, tenantId, domain)) && !(await hasSentFrom(db, tenantId, domain)))
    throw notFound(DomainErrorText.domainNotFound);
  const [own, mailerIds] = await Promise.all([
    scopeReputation(db, tenantId, 'domain', domain, s.window),
    mailersOfDomain(db, tenantId, domain, s.window),
  ]);
  const mailers = await Promise.all(
    mailerIds.map(async (id) => ({
      mailer_id: id,
      ...countsView(await scopeReputation(db, tenantId, 'mailer', id, s.window)),
    })),
  );
  return {
    domain,
    window: s.window,
    ...countsView(own),
    thresholds: { bounce_rate: s.bounceRate, complaint_rate: s.complaintRate, min_volume: s.minVolume },
    mailers,
  };
}

export function reputationRoutes(ctx: Pick<GatewayContext, 'db' | 'config'>): Router {
  const { db } = ctx;
  const settings = reputationSettingsOf(ctx.config);
  const router = Router();

  router.get('/v1/domain/:domain/reputation', async (req, res) => {
    const { tenantId } = tenantOf(res);
    const data = await domainReputation(db, tenantId, domainParam(req), settings);
    res.json({ success: true, data } satisfies DomainReputationResponse);
  });

  router.post('/v1/domain/:domain/resume', async (req, res) => {
    const { tenantId } = tenantOf(res);
    const domain = domainParam(req);
    await domainReputation(db, tenantId, domain, settings); // 404 first
    const resumed = await resumeSending(db, tenantId, 'domain', domain, settings.window);
    const data = await domainReputation(db, tenantId, domain, settings);
    res.json({
      success: true,
      message: resumed ? 'Sending resumed' : 'Sending was not paused',
      data,
    } satisfies DomainReputationResponse);
  });

  return router;
}
