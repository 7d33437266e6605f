/**
 * Stored DMARC aggregate and TLS-RPT reports for the report-summary tests: rows written straight
 * into the tables of migration 0036, as the MX intake stores them (its parsing is tested with the
 * intake; these tests start where the rows are). Ids are fresh ULIDs; every field the summary
 * reads is given by the test.
 */
import { ulid } from '@mailyard/contracts';
import type { Queryable } from '@mailyard/platform';

export interface DmarcRowInput {
  source_ip: string;
  count: number;
  disposition?: string;
  dkim: 'pass' | 'fail';
  spf: 'pass' | 'fail';
  header_from?: string;
}

export interface DmarcReportInput {
  tenantId: string;
  domainId: string;
  /** policy_published.domain; defaults to header_from of the first row or `example.com`. */
  policyDomain?: string;
  orgName: string;
  begin: string;
  end: string;
  rows: DmarcRowInput[];
}

/** Inserts one DMARC report and its rows; returns the report's id. */
export async function insertDmarcReport(db: Queryable, r: DmarcReportInput): Promise<string> {
  const id = `dmarcrep_${ulid()}`;
  const policyDomain = r.policyDomain ?? r.rows[0]?.header_from ?? 'example.com';
  await db.query(
    `INSERT INTO dmarc_reports (id, tenant_id, domain_id, org_name, reporter_email, report_id, begin_at, end_at,
                                policy_domain, policy)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      id,
      r.tenantId,
      r.domainId,
      r.orgName,
      `noreply-dmarc@${r.orgName}`,
      ulid(),
      r.begin,
      r.end,
      policyDomain,
      JSON.stringify({ domain: policyDomain, adkim: 'r', aspf: 'r', p: 'none', pct: 100 }),
    ],
  );
  for (const [n, row] of r.rows.entries())
    await db.query(
      `INSERT INTO dmarc_report_rows (report_id, n, source_ip, count, disposition, dkim, spf, header_from)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        id,
        n,
        row.source_ip,
        row.count,
        row.disposition ?? 'none',
        row.dkim,
        row.spf,
        row.header_from ?? policyDomain,
      ],
    );
  return id;
}

export interface TlsPolicyInput {
  successful: number;
  failed: number;
  /** failure-details as stored: [{result_type, failed_session_count, ...}] (anything, to test hostile values). */
  failureDetails?: unknown;
}

export interface TlsReportInput {
  tenantId: string;
  domainId: string;
  orgName: string;
  start: string;
  end: string;
  policies: TlsPolicyInput[];
}

/** Inserts one TLS-RPT report and its policies; returns the report's id. */
export async function insertTlsReport(db: Queryable, r: TlsReportInput): Promise<string> {
  const id = `tlsrep_${ulid()}`;
  await db.query(
    `INSERT INTO tls_reports (id, tenant_id, domain_id, organization_name, contact_info, report_id, start_at, end_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [id, r.tenantId, r.domainId, r.orgName, `smtp-tls-reporting@${r.orgName}`, ulid(), r.start, r.end],
  );
  for (const [n, p] of r.policies.entries())
    await db.query(
      `INSERT INTO tls_report_policies (report_id, n, policy_type, policy_domain, successful, failed, failure_details)
       VALUES ($1, $2, 'sts', 'example.com', $3, $4, $5)`,
      [id, n, p.successful, p.failed, JSON.stringify(p.failureDetails ?? [])],
    );
  return id;
}
