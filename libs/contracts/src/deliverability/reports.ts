/**
 * DMARC aggregate (RFC 7489 appendix C) and TLS-RPT (RFC 8460) reports as the MX reads them
 * (services/inbound-smtp src/reports/) and the store keeps them (libs/store
 * deliverability-reports.ts; docs/deliverability.md). The schemas validate what the parsers
 * produce (an XML document turned into plain objects, a JSON document) and turn it into the
 * parsed shapes below: a field that is missing or malformed refuses the whole report with the
 * first issue as its reason, never a partial report. Every list is bounded here, every count is
 * a non-negative safe integer, every date range is real (begin <= end, within years
 * 2000-2100).
 */
import { z } from 'zod';

/** Most `<record>`s one DMARC report may hold (the 20 MB size cap usually refuses first). */
export const MAX_DMARC_RECORDS = 100_000;
/** Most auth_results entries (dkim, spf each) kept per record. */
export const MAX_AUTH_RESULTS = 20;
/** Most `policies[]` of one TLS report, and `failure-details[]` of one policy. */
export const MAX_TLS_POLICIES = 1000;
export const MAX_TLS_FAILURE_DETAILS = 1000;
/** Longest text field kept (names, ids, addresses, additional information). */
export const MAX_REPORT_TEXT = 1000;

export interface DmarcPolicyPublished {
  domain: string;
  adkim: string;
  aspf: string;
  p: string;
  sp: string;
  pct: number;
}

export interface DmarcAuthResult {
  domain: string;
  /** dkim: the selector; spf: the scope (`mfrom`, `helo`); absent when the reporter gave none. */
  selector?: string;
  scope?: string;
  result: string;
}

export interface DmarcRecord {
  sourceIp: string;
  count: number;
  disposition: string;
  /** policy_evaluated: the DMARC-aligned results (`pass` / `fail`). */
  dkim: string;
  spf: string;
  headerFrom: string;
  dkimAuth: DmarcAuthResult[];
  spfAuth: DmarcAuthResult[];
}

export interface DmarcReport {
  orgName: string;
  email: string;
  reportId: string;
  begin: Date;
  end: Date;
  policy: DmarcPolicyPublished;
  records: DmarcRecord[];
}

export interface TlsFailureDetail {
  result_type: string;
  failed_session_count: number;
  sending_mta_ip?: string;
  receiving_mx_hostname?: string;
  receiving_mx_helo?: string;
  receiving_ip?: string;
  additional_information?: string;
  failure_reason_code?: string;
}

export interface TlsPolicy {
  policyType: string;
  policyString: string[];
  policyDomain: string;
  mxHost: string[];
  successful: number;
  failed: number;
  failureDetails: TlsFailureDetail[];
}

export interface TlsReport {
  organizationName: string;
  contactInfo: string;
  reportId: string;
  start: Date;
  end: Date;
  policies: TlsPolicy[];
}

const MIN_DATE = Date.UTC(2000, 0, 1);
const MAX_DATE = Date.UTC(2100, 0, 1);

const text = (max = MAX_REPORT_TEXT) => z.string().trim().max(max);
const required = (name: string) => text().min(1, `${name} is empty`);
/** A count: a non-negative safe integer, from a number or its decimal text (XML). */
const count = z
  .union([z.number(), z.string().trim().regex(/^\d+$/, 'not a non-negative integer').transform(Number)])
  .pipe(z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER));
/** A report's domain: lowercase, no trailing dot, host-name characters only. */
const domain = z
  .string()
  .trim()
  .toLowerCase()
  .transform((s) => s.replace(/\.$/, ''))
  .pipe(
    z
      .string()
      .regex(/^[a-z0-9_-]+(\.[a-z0-9_-]+)+$/, 'not a domain name')
      .max(253),
  );
const inRange = (d: Date) => d.getTime() >= MIN_DATE && d.getTime() <= MAX_DATE;
const epochSeconds = count.transform((s) => new Date(s * 1000)).refine(inRange, 'date out of range');

/** An element that may appear once or several times (the XML reader gives an object or a list). */
const list = <T extends z.ZodTypeAny>(item: T, max: number) =>
  z.preprocess(
    (v) => (v === undefined || v === '' ? [] : Array.isArray(v) ? v : [v]),
    z.array(item).max(max),
  );
/** Text of an optional element ('' when absent or empty). */
const optText = z
  .preprocess((v) => (v === undefined || v === null ? '' : v), z.union([text(), z.number()]))
  .transform(String);

const authResult = (extra: 'selector' | 'scope') =>
  z
    .object({ domain: optText, selector: optText.optional(), scope: optText.optional(), result: optText })
    .transform((a): DmarcAuthResult => {
      const x = a[extra];
      return { domain: a.domain.toLowerCase(), ...(x ? { [extra]: x } : {}), result: a.result.toLowerCase() };
    });

const dmarcRecord = z
  .object({
    row: z.object({
      source_ip: required('source_ip').regex(/^[0-9a-fA-F:.]+$/, 'source_ip is not an IP address'),
      count,
      policy_evaluated: z.object({
        disposition: required('disposition').toLowerCase(),
        dkim: optText,
        spf: optText,
      }),
    }),
    identifiers: z.object({ header_from: optText }).optional(),
    auth_results: z
      .object({
        dkim: list(authResult('selector'), MAX_AUTH_RESULTS),
        spf: list(authResult('scope'), MAX_AUTH_RESULTS),
      })
      .optional(),
  })
  .transform(
    (r): DmarcRecord => ({
      sourceIp: r.row.source_ip,
      count: r.row.count,
      disposition: r.row.policy_evaluated.disposition,
      dkim: r.row.policy_evaluated.dkim.toLowerCase(),
      spf: r.row.policy_evaluated.spf.toLowerCase(),
      headerFrom: (r.identifiers?.header_from ?? '').toLowerCase(),
      dkimAuth: r.auth_results?.dkim ?? [],
      spfAuth: r.auth_results?.spf ?? [],
    }),
  );

/** The `<feedback>` element as plain objects (text content as strings) -> DmarcReport. */
export const DmarcFeedbackSchema = z
  .object({
    report_metadata: z.object({
      org_name: required('org_name'),
      email: optText,
      report_id: required('report_id'),
      date_range: z.object({ begin: epochSeconds, end: epochSeconds }),
    }),
    policy_published: z.object({
      domain,
      adkim: optText,
      aspf: optText,
      p: optText,
      sp: optText,
      pct: z.preprocess((v) => (v === undefined || v === '' ? 100 : v), count.pipe(z.number().max(100))),
    }),
    record: list(dmarcRecord, MAX_DMARC_RECORDS),
  })
  .refine((f) => f.report_metadata.date_range.begin <= f.report_metadata.date_range.end, {
    message: 'date_range ends before it begins',
    path: ['report_metadata', 'date_range'],
  })
  .transform(
    (f): DmarcReport => ({
      orgName: f.report_metadata.org_name,
      email: f.report_metadata.email,
      reportId: f.report_metadata.report_id,
      begin: f.report_metadata.date_range.begin,
      end: f.report_metadata.date_range.end,
      policy: {
        domain: f.policy_published.domain,
        adkim: f.policy_published.adkim.toLowerCase(),
        aspf: f.policy_published.aspf.toLowerCase(),
        p: f.policy_published.p.toLowerCase(),
        sp: f.policy_published.sp.toLowerCase(),
        pct: f.policy_published.pct,
      },
      records: f.record,
    }),
  );

const dateTime = z
  .string()
  .datetime({ offset: true, message: 'not an RFC 3339 date-time' })
  .transform((s) => new Date(s))
  .refine(inRange, 'date out of range');
const optString = (max = MAX_REPORT_TEXT) => z.string().max(max).optional();

const failureDetail = z
  .object({
    'result-type': required('result-type'),
    'failed-session-count': count,
    'sending-mta-ip': optString(),
    'receiving-mx-hostname': optString(),
    'receiving-mx-helo': optString(),
    'receiving-ip': optString(),
    'additional-information': optString(),
    'failure-reason-code': optString(),
  })
  .transform((d): TlsFailureDetail => {
    const out: TlsFailureDetail = {
      result_type: d['result-type'],
      failed_session_count: d['failed-session-count'],
    };
    if (d['sending-mta-ip']) out.sending_mta_ip = d['sending-mta-ip'];
    if (d['receiving-mx-hostname']) out.receiving_mx_hostname = d['receiving-mx-hostname'];
    if (d['receiving-mx-helo']) out.receiving_mx_helo = d['receiving-mx-helo'];
    if (d['receiving-ip']) out.receiving_ip = d['receiving-ip'];
    if (d['additional-information']) out.additional_information = d['additional-information'];
    if (d['failure-reason-code']) out.failure_reason_code = d['failure-reason-code'];
    return out;
  });

const tlsPolicy = z
  .object({
    policy: z.object({
      'policy-type': required('policy-type'),
      'policy-string': z.array(z.string().max(MAX_REPORT_TEXT)).max(100).default([]),
      'policy-domain': domain,
      'mx-host': z
        .union([z.string().max(MAX_REPORT_TEXT), z.array(z.string().max(MAX_REPORT_TEXT)).max(100)])
        .transform((v) => (Array.isArray(v) ? v : [v]))
        .default([]),
    }),
    summary: z.object({
      'total-successful-session-count': count,
      'total-failure-session-count': count,
    }),
    'failure-details': z.array(failureDetail).max(MAX_TLS_FAILURE_DETAILS).default([]),
  })
  .transform(
    (p): TlsPolicy => ({
      policyType: p.policy['policy-type'],
      policyString: p.policy['policy-string'],
      policyDomain: p.policy['policy-domain'],
      mxHost: p.policy['mx-host'],
      successful: p.summary['total-successful-session-count'],
      failed: p.summary['total-failure-session-count'],
      failureDetails: p['failure-details'],
    }),
  );

/** An RFC 8460 report (the JSON document) -> TlsReport. */
export const TlsRptSchema = z
  .object({
    'organization-name': required('organization-name'),
    'date-range': z.object({ 'start-datetime': dateTime, 'end-datetime': dateTime }),
    'contact-info': text().default(''),
    'report-id': required('report-id'),
    policies: z.array(tlsPolicy).min(1, 'no policies').max(MAX_TLS_POLICIES),
  })
  .refine((r) => r['date-range']['start-datetime'] <= r['date-range']['end-datetime'], {
    message: 'date-range ends before it starts',
    path: ['date-range'],
  })
  .transform(
    (r): TlsReport => ({
      organizationName: r['organization-name'],
      contactInfo: r['contact-info'],
      reportId: r['report-id'],
      start: r['date-range']['start-datetime'],
      end: r['date-range']['end-datetime'],
      policies: r.policies,
    }),
  );

/** The first issue of a failed parse, as one line naming the field ("a.b.c: message"). */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  return issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
}
