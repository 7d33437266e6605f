/**
 * Reads one TLS-RPT report (RFC 8460 section 4, the JSON document of `application/tlsrpt+json`,
 * or of `application/tlsrpt+gzip` once unpack.ts inflated it), pure: JSON.parse (the document
 * is already within MAX_REPORT_BYTES) -> contracts' TlsRptSchema. The policy and failure-detail
 * lists are counted before validation (MAX_TLS_POLICIES, MAX_TLS_FAILURE_DETAILS), so a
 * document of a million policies is refused without validating one.
 * Never throws: `{ ok: false, reason }` for whatever is not a valid report.
 */
import {
  MAX_TLS_FAILURE_DETAILS,
  MAX_TLS_POLICIES,
  type TlsReport,
  TlsRptSchema,
  firstIssue,
} from '@mailyard/contracts';

export type TlsParsed = { ok: true; report: TlsReport } | { ok: false; reason: string };

/** The report in `bytes` (UTF-8 JSON). */
export function parseTlsRpt(bytes: Buffer): TlsParsed {
  let doc: unknown;
  try {
    doc = JSON.parse(bytes.toString('utf8').replace(/^\uFEFF/, ''));
  } catch (err) {
    return { ok: false, reason: `JSON: ${(err as Error).message}` };
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    return { ok: false, reason: 'not a JSON object' };
  const policies = (doc as { policies?: unknown }).policies;
  if (Array.isArray(policies)) {
    if (policies.length > MAX_TLS_POLICIES)
      return { ok: false, reason: `${policies.length} policies (at most ${MAX_TLS_POLICIES})` };
    for (const p of policies) {
      const details = (p as { 'failure-details'?: unknown } | null)?.['failure-details'];
      if (Array.isArray(details) && details.length > MAX_TLS_FAILURE_DETAILS)
        return {
          ok: false,
          reason: `${details.length} failure-details in one policy (at most ${MAX_TLS_FAILURE_DETAILS})`,
        };
    }
  }
  const parsed = TlsRptSchema.safeParse(doc);
  if (!parsed.success) return { ok: false, reason: firstIssue(parsed.error) };
  return { ok: true, report: parsed.data };
}
