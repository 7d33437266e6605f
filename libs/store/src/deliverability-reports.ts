/**
 * DMARC aggregate and TLS-RPT reports received by the MX, stored per tenant domain (migration
 * 0036; docs/deliverability.md). The MX (services/inbound-smtp reports/report-mail.ts):
 * - `findReportDomains`: the tenants' domains a report's domain belongs to. For each tenant the
 *   closest of its VERIFIED, not deleted domains among the name itself and its parents (a report
 *   for `news.brand.test` goes to the tenant that verified `news.brand.test`, else `brand.test`);
 *   every tenant holding such a domain gets its copy; an unverified claim gets nothing.
 * - `saveDmarcReportIn` / `saveTlsReportIn`: one report for one domain inside the inbound
 *   message's completing transaction (inboundMessages.complete), so a redelivered message
 *   stores nothing twice; the reporter's (org, report id) is unique per domain besides (ON
 *   CONFLICT DO NOTHING: a report mailed twice, or in two attachments, is stored once). The rows
 *   are written with the report or not at all (one transaction), in batches of ROW_BATCH.
 */
import { type DmarcReport, IdPrefix, type TlsPolicy, type TlsReport, newId } from '@mailyard/contracts';
import type { Queryable } from '@mailyard/platform';

/** Rows per INSERT statement (unnest arrays). */
const ROW_BATCH = 5000;

export interface ReportDomain {
  domainId: string;
  tenantId: string;
  name: string;
}

/** `name` and its parents with at least two labels: a.b.c -> [a.b.c, b.c]. */
export function domainAndParents(name: string): string[] {
  const labels = name.toLowerCase().replace(/\.$/, '').split('.');
  const out: string[] = [];
  for (let i = 0; i <= labels.length - 2; i++) out.push(labels.slice(i).join('.'));
  return out;
}

/** The verified domains, one per tenant (the closest), that reports for `name` belong to. */
export async function findReportDomains(db: Queryable, name: string): Promise<ReportDomain[]> {
  const candidates = domainAndParents(name);
  if (candidates.length === 0) return [];
  const { rows } = await db.query<{ id: string; tenant_id: string; name: string }>(
    `SELECT DISTINCT ON (tenant_id) id, tenant_id, name FROM domains
      WHERE name = ANY($1::text[]) AND verified AND deleted_at IS NULL
      ORDER BY tenant_id, length(name) DESC, id`,
    [candidates],
  );
  return rows.map((r) => ({ domainId: r.id, tenantId: r.tenant_id, name: r.name }));
}

export type SaveOutcome = { stored: true; id: string } | { stored: false };

export async function saveDmarcReportIn(
  tx: Queryable,
  domain: ReportDomain,
  report: DmarcReport,
  inboundMessageId: string | null,
): Promise<SaveOutcome> {
  const id = newId(IdPrefix.dmarcReport);
  const { rowCount } = await tx.query(
    `INSERT INTO dmarc_reports (id, tenant_id, domain_id, org_name, reporter_email, report_id, begin_at, end_at,
                                policy_domain, policy, inbound_message_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11)
     ON CONFLICT (domain_id, org_name, report_id) DO NOTHING`,
    [
      id,
      domain.tenantId,
      domain.domainId,
      report.orgName,
      report.email,
      report.reportId,
      report.begin,
      report.end,
      report.policy.domain,
      JSON.stringify(report.policy),
      inboundMessageId,
    ],
  );
  if (rowCount === 0) return { stored: false };
  for (let start = 0; start < report.records.length; start += ROW_BATCH) {
    const batch = report.records.slice(start, start + ROW_BATCH);
    await tx.query(
      `INSERT INTO dmarc_report_rows (report_id, n, source_ip, count, disposition, dkim, spf, header_from, dkim_auth, spf_auth)
       SELECT $1, * FROM unnest($2::int[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[],
                               $9::jsonb[], $10::jsonb[])`,
      [
        id,
        batch.map((_, i) => start + i),
        batch.map((r) => r.sourceIp),
        batch.map((r) => r.count),
        batch.map((r) => r.disposition),
        batch.map((r) => r.dkim),
        batch.map((r) => r.spf),
        batch.map((r) => r.headerFrom),
        batch.map((r) => JSON.stringify(r.dkimAuth)),
        batch.map((r) => JSON.stringify(r.spfAuth)),
      ],
    );
  }
  return { stored: true, id };
}

/**
 * One TLS report for one domain: `policies` are the report's policies whose policy-domain
 * belongs to that domain (report-mail.ts groups them).
 */
export async function saveTlsReportIn(
  tx: Queryable,
  domain: ReportDomain,
  report: TlsReport,
  policies: TlsPolicy[],
  inboundMessageId: string | null,
): Promise<SaveOutcome> {
  const id = newId(IdPrefix.tlsReport);
  const { rowCount } = await tx.query(
    `INSERT INTO tls_reports (id, tenant_id, domain_id, organization_name, contact_info, report_id, start_at, end_at,
                              inbound_message_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (domain_id, organization_name, report_id) DO NOTHING`,
    [
      id,
      domain.tenantId,
      domain.domainId,
      report.organizationName,
      report.contactInfo,
      report.reportId,
      report.start,
      report.end,
      inboundMessageId,
    ],
  );
  if (rowCount === 0) return { stored: false };
  await tx.query(
    `INSERT INTO tls_report_policies (report_id, n, policy_type, policy_domain, mx_host, successful, failed, failure_details)
     SELECT $1, * FROM unnest($2::int[], $3::text[], $4::text[], $5::jsonb[], $6::bigint[], $7::bigint[], $8::jsonb[])`,
    [
      id,
      policies.map((_, i) => i),
      policies.map((p) => p.policyType),
      policies.map((p) => p.policyDomain),
      policies.map((p) => JSON.stringify(p.mxHost)),
      policies.map((p) => p.successful),
      policies.map((p) => p.failed),
      policies.map((p) => JSON.stringify(p.failureDetails)),
    ],
  );
  return { stored: true, id };
}
