/**
 * The consumer's step for mail to the report addresses `dmarc@` and `tls-rpt@` (the bounce
 * domain and SERVICE_DOMAIN; docs/deliverability.md), as named steps:
 * read (report-mime.ts) -> find the report attachments (report-parts.ts) -> unpack (unpack.ts)
 * -> parse (dmarc-aggregate.ts, tls-rpt.ts) -> match the report's domain to the tenants'
 * verified domains (libs/store findReportDomains: the name or its closest verified parent, one
 * copy per tenant holding one) -> store. Storing is returned as one write that process-message.ts
 * runs in the message's completing transaction (inboundMessages.complete), so a redelivered or
 * recovered message stores nothing twice; the (domain, reporter, report id) key besides keeps a
 * report mailed twice once. A TLS report's policies are grouped by the domain they match.
 * Whatever is refused (no report attachment, over a limit, hostile, invalid, no verified domain)
 * is logged with its reason and counted in `mailyard_inbound_reports_total{kind,outcome}`
 * (outcomes: stored, duplicate, refused, unmatched); nothing of a refused report is stored.
 * Never throws for what the message contains (database errors go back to the caller, which
 * leaves the message for a retry).
 */
import type { DmarcReport, TlsPolicy, TlsReport } from '@mailyard/contracts';
import { type Db, type Logger, type Queryable, counter, messageHeaderProblem } from '@mailyard/platform';
import {
  type InboundRecipient,
  type ReportDomain,
  type StoredInboundMessage,
  findReportDomains,
  saveDmarcReportIn,
  saveTlsReportIn,
} from '@mailyard/store';
import { readMime } from '../report-mime';
import { parseDmarcAggregate } from './dmarc-aggregate';
import { type ReportKind, reportAttachments } from './report-parts';
import { parseTlsRpt } from './tls-rpt';
import { unpack } from './unpack';

export interface ReportMailDeps {
  db: Db;
  logger: Logger;
}

/** Writes the message's reports inside the completing transaction. */
export type ReportWrite = (tx: Queryable) => Promise<void>;

type Planned =
  | { kind: 'dmarc'; domain: ReportDomain; report: DmarcReport }
  | { kind: 'tls_rpt'; domain: ReportDomain; report: TlsReport; policies: TlsPolicy[] };

const reportsTotal = counter(
  'mailyard_inbound_reports_total',
  'DMARC aggregate and TLS-RPT reports received at the report addresses, by kind and outcome',
  ['kind', 'outcome'],
);

export const isReportRecipient = (r: InboundRecipient): boolean =>
  r.service === 'dmarc' || r.service === 'tls_rpt';

/** The write storing the reports of `message` for its report recipients; null when there is nothing to store. */
export async function reportMailWrite(
  deps: ReportMailDeps,
  message: StoredInboundMessage,
  recipients: InboundRecipient[],
): Promise<ReportWrite | null> {
  const kinds = [...new Set(recipients.map((r) => r.service).filter(isKind))];
  const planned: Planned[] = [];
  for (const kind of kinds) planned.push(...(await readReports(deps, message, kind)));
  if (planned.length === 0) return null;
  return async (tx) => {
    for (const p of planned) {
      const saved =
        p.kind === 'dmarc'
          ? await saveDmarcReportIn(tx, p.domain, p.report, message.id)
          : await saveTlsReportIn(tx, p.domain, p.report, p.policies, message.id);
      const outcome = saved.stored ? 'stored' : 'duplicate';
      reportsTotal.inc({ kind: p.kind, outcome });
      deps.logger.info('report received', {
        inbound_message_id: message.id,
        kind: p.kind,
        outcome,
        tenant_id: p.domain.tenantId,
        domain: p.domain.name,
        reporter: p.kind === 'dmarc' ? p.report.orgName : p.report.organizationName,
        report_id: p.report.reportId,
      });
    }
  };
}

const isKind = (k: InboundRecipient['service']): k is ReportKind => k === 'dmarc' || k === 'tls_rpt';

/** read -> find -> unpack -> parse -> match, for one kind; what to store (refusals are counted here). */
async function readReports(
  deps: ReportMailDeps,
  message: StoredInboundMessage,
  kind: ReportKind,
): Promise<Planned[]> {
  const refuse = (reason: string, name = '') => {
    reportsTotal.inc({ kind, outcome: 'refused' });
    deps.logger.info('report refused', { inbound_message_id: message.id, kind, attachment: name, reason });
  };
  const problem = messageHeaderProblem(message.raw);
  if (problem) {
    refuse(problem);
    return [];
  }
  let attachments: ReturnType<typeof reportAttachments>;
  try {
    attachments = reportAttachments(readMime(message.raw), kind);
  } catch (err) {
    refuse(`unreadable message: ${(err as Error).message}`);
    return [];
  }
  if (attachments.length === 0) {
    refuse('no report attachment');
    return [];
  }
  const planned: Planned[] = [];
  for (const a of attachments) {
    const unpacked = await unpack(a.bytes, a.name);
    if (!unpacked.ok) {
      refuse(unpacked.reason, a.name);
      continue;
    }
    for (const doc of unpacked.documents) {
      const name = doc.name || a.name;
      if (kind === 'dmarc') {
        const parsed = parseDmarcAggregate(doc.bytes);
        if (!parsed.ok) refuse(parsed.reason, name);
        else planned.push(...(await matchDmarc(deps, message, parsed.report)));
      } else {
        const parsed = parseTlsRpt(doc.bytes);
        if (!parsed.ok) refuse(parsed.reason, name);
        else planned.push(...(await matchTls(deps, message, parsed.report)));
      }
    }
  }
  return planned;
}

async function matchDmarc(deps: ReportMailDeps, message: StoredInboundMessage, report: DmarcReport) {
  const domains = await findReportDomains(deps.db, report.policy.domain);
  if (domains.length === 0) unmatched(deps, message, 'dmarc', report.policy.domain, report.reportId);
  return domains.map((domain): Planned => ({ kind: 'dmarc', domain, report }));
}

async function matchTls(deps: ReportMailDeps, message: StoredInboundMessage, report: TlsReport) {
  const byDomain = new Map<string, { domain: ReportDomain; policies: TlsPolicy[] }>();
  for (const name of new Set(report.policies.map((p) => p.policyDomain))) {
    const domains = await findReportDomains(deps.db, name);
    if (domains.length === 0) unmatched(deps, message, 'tls_rpt', name, report.reportId);
    const policies = report.policies.filter((p) => p.policyDomain === name);
    for (const domain of domains) {
      const entry = byDomain.get(domain.domainId);
      if (entry) entry.policies.push(...policies);
      else byDomain.set(domain.domainId, { domain, policies: [...policies] });
    }
  }
  return [...byDomain.values()].map((e): Planned => ({ kind: 'tls_rpt', report, ...e }));
}

function unmatched(
  deps: ReportMailDeps,
  message: StoredInboundMessage,
  kind: ReportKind,
  domain: string,
  reportId: string,
): void {
  reportsTotal.inc({ kind, outcome: 'unmatched' });
  deps.logger.info('report refused', {
    inbound_message_id: message.id,
    kind,
    domain,
    report_id: reportId,
    reason: 'no tenant has this domain (or a parent of it) verified',
  });
}
