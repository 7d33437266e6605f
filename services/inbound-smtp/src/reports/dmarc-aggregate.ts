/**
 * Reads one DMARC aggregate report (RFC 7489 appendix C, the `<feedback>` XML document), pure:
 * the document (already unpacked and within MAX_REPORT_BYTES: unpack.ts) -> fast-xml-parser ->
 * contracts' DmarcFeedbackSchema (docs/deliverability.md "DMARC aggregate reports").
 * Hostile XML is refused before the parser sees it, cheaply:
 * - any `<!DOCTYPE` or `<!ENTITY` (no DTD exists in a report; it is what billion-laughs bombs
 *   and external entities (XXE) need): refused outright, so no entity is ever declared;
 * - the parser runs with entity processing off; the five predefined entities and character
 *   references are decoded here, in text values only, one pass;
 * - nesting deeper than MAX_XML_DEPTH (the parser's maxNestedTags) and more than
 *   MAX_DMARC_RECORDS `<record>` elements (counted before parsing) are refused.
 * Never throws: `{ ok: false, reason }` for whatever is not a valid report.
 */
import { DmarcFeedbackSchema, type DmarcReport, MAX_DMARC_RECORDS, firstIssue } from '@mailyard/contracts';
import { XMLParser } from 'fast-xml-parser';

/** A report nests 5 deep (feedback/record/auth_results/dkim/domain); room for extensions. */
export const MAX_XML_DEPTH = 16;

export type DmarcParsed = { ok: true; report: DmarcReport } | { ok: false; reason: string };

const ARRAYS = new Set([
  'feedback.record',
  'feedback.record.auth_results.dkim',
  'feedback.record.auth_results.spf',
]);

const ENTITY = /&(?:#x([0-9a-fA-F]{1,6})|#(\d{1,7})|(lt|gt|amp|quot|apos));/g;
const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function decodeEntities(value: string): string {
  if (!value.includes('&')) return value;
  return value.replace(
    ENTITY,
    (whole, hex: string | undefined, dec: string | undefined, name: string | undefined) => {
      if (name) return NAMED[name]!;
      const code = Number.parseInt(hex ?? dec ?? '', hex ? 16 : 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    },
  );
}

const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  processEntities: false,
  htmlEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  maxNestedTags: MAX_XML_DEPTH,
  isArray: (_name: string, jpath: unknown) => ARRAYS.has(String(jpath)),
  tagValueProcessor: (_name: string, value: string) => decodeEntities(value),
});

const DTD = /<!\s*(DOCTYPE|ENTITY)/i;
const RECORD = /<(?:[A-Za-z_][\w.-]*:)?record[\s>/]/g;

/** The report in `bytes` (UTF-8 XML). */
export function parseDmarcAggregate(bytes: Buffer): DmarcParsed {
  const xml = bytes.toString('utf8').replace(/^\uFEFF/, '');
  if (!/^\s*</.test(xml)) return { ok: false, reason: 'not an XML document' };
  if (DTD.test(xml)) return { ok: false, reason: 'DOCTYPE or ENTITY declarations are not accepted' };
  let records = 0;
  RECORD.lastIndex = 0;
  while (RECORD.exec(xml)) {
    if (++records > MAX_DMARC_RECORDS) return { ok: false, reason: `more than ${MAX_DMARC_RECORDS} records` };
  }
  let doc: unknown;
  try {
    doc = parser.parse(xml);
  } catch (err) {
    return { ok: false, reason: `XML: ${(err as Error).message.split('\n')[0]}` };
  }
  const feedback = (doc as { feedback?: unknown } | null)?.feedback;
  if (!feedback || typeof feedback !== 'object') return { ok: false, reason: 'no <feedback> element' };
  const parsed = DmarcFeedbackSchema.safeParse(feedback);
  if (!parsed.success) return { ok: false, reason: firstIssue(parsed.error) };
  return { ok: true, report: parsed.data };
}
