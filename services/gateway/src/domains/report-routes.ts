/**
 * The report summaries of a sending domain (docs/api/domains.md "DMARC and TLS report
 * summaries", docs/deliverability.md): `GET /v1/domain/{domain}/dmarc` and
 * `GET /v1/domain/{domain}/tls-reports`. The domain is named as the other domain routes take it
 * (IDNA ok) and is the tenant's own: another tenant's domain reads as not found. Query and range
 * rules: libs/contracts api/deliverability.ts; the sums: libs/store deliverability-summary.ts.
 */
import {
  type DmarcSummaryResponse,
  DomainErrorText,
  type TlsReportsResponse,
  parseDeliverabilityReportsQuery,
  reportDays,
  reportsRange,
  tlsReportDays,
} from '@mailyard/contracts';
import { type Db, badRequest, notFound } from '@mailyard/platform';
import { deliverabilitySummary, domains } from '@mailyard/store';
import { type Request, type Response, Router } from 'express';
import { tenantOf } from '../auth/api-key-auth';
import { domainParam } from './domain-param';

/** The query's range and the tenant's domain of the path; 400 / 404 with the spec's envelope. */
async function reportRequest(db: Db, req: Request, res: Response) {
  const name = domainParam(req);
  const parsed = parseDeliverabilityReportsQuery(req.query);
  if (!parsed.success) throw badRequest(parsed.error);
  const range = reportsRange(parsed.data, Date.now());
  if (typeof range === 'string') throw badRequest(range);
  const { tenantId } = tenantOf(res);
  const domain = await domains.get(db, tenantId, name);
  if (!domain) throw notFound(DomainErrorText.domainNotFound);
  return { tenantId, domainId: domain.id, range };
}

export function domainReportRoutes(db: Db): Router {
  const router = Router();

  router.get('/v1/domain/:domain/dmarc', async (req, res) => {
    const { tenantId, domainId, range } = await reportRequest(db, req, res);
    const data = await deliverabilitySummary.dmarc(db, { tenantId, domainId, ...range });
    res.json({ success: true, data } satisfies DmarcSummaryResponse);
  });

  router.get('/v1/domain/:domain/tls-reports', async (req, res) => {
    const { tenantId, domainId, range } = await reportRequest(db, req, res);
    const days = reportDays(range);
    const found = await deliverabilitySummary.tlsDays(db, { tenantId, domainId, ...days });
    const list = tlsReportDays(days, found);
    res.json({
      success: true,
      data: { reports: list.reduce((n, d) => n + d.reports, 0), days: list },
    } satisfies TlsReportsResponse);
  });

  return router;
}
