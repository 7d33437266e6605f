import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { type TlsParsed, parseTlsRpt } from './tls-rpt';
import { unpack } from './unpack';

const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', name));
const googleDoc = () => JSON.parse(fixture('tlsrpt-google.json').toString());

function refused(r: TlsParsed): string {
  if (r.ok) throw new Error('expected a refusal');
  return r.reason;
}
const parse = (doc: unknown) => parseTlsRpt(Buffer.from(JSON.stringify(doc)));

test("Google's gzip report, unpacked and read", async () => {
  const unpacked = await unpack(
    gzipSync(fixture('tlsrpt-google.json')),
    'google.com!brand.test!1700006400!1700092799.json.gz',
  );
  if (!unpacked.ok) throw new Error(unpacked.reason);
  const r = parseTlsRpt(unpacked.documents[0]!.bytes);
  if (!r.ok) throw new Error(r.reason);
  expect(r.report).toEqual({
    organizationName: 'Google Inc.',
    contactInfo: 'smtp-tls-reporting@google.com',
    reportId: '2023-11-15T00:00:00Z_brand.test',
    start: new Date('2023-11-15T00:00:00Z'),
    end: new Date('2023-11-15T23:59:59Z'),
    policies: [
      {
        policyType: 'sts',
        policyString: ['version: STSv1', 'mode: testing', 'mx: mx.brand.test', 'max_age: 86400'],
        policyDomain: 'brand.test',
        mxHost: ['mx.brand.test'],
        successful: 120,
        failed: 3,
        failureDetails: [
          {
            result_type: 'certificate-expired',
            sending_mta_ip: '209.85.220.41',
            receiving_mx_hostname: 'mx.brand.test',
            receiving_ip: '203.0.113.10',
            failed_session_count: 3,
          },
        ],
      },
    ],
  });
});

test("Microsoft's report: a policy without details, mx-host as one string, every optional field", () => {
  const r = parseTlsRpt(fixture('tlsrpt-microsoft.json'));
  if (!r.ok) throw new Error(r.reason);
  expect(
    r.report.policies.map((p) => [p.policyType, p.policyDomain, p.mxHost, p.successful, p.failed]),
  ).toEqual([
    ['no-policy-found', 'brand.test', [], 40, 0],
    ['sts', 'mail.brand.test', ['*.brand.test'], 7, 2],
  ]);
  expect(r.report.policies[1]!.failureDetails).toEqual([
    {
      result_type: 'starttls-not-supported',
      failed_session_count: 2,
      sending_mta_ip: '2603:10b6::1',
      receiving_mx_hostname: 'mx2.brand.test',
      receiving_mx_helo: 'mx2',
      receiving_ip: '198.51.100.2',
      additional_information: 'https://learn.microsoft.com/tlsrpt',
      failure_reason_code: 'STARTTLS not offered',
    },
  ]);
});

test('a million policies, or a thousand and one failure details, are refused before validation', () => {
  const doc = googleDoc();
  const policy = doc.policies[0];
  // 10^6 empty policies: 3 MB of JSON, well within the size cap
  const million = { ...doc, policies: Array.from({ length: 1_000_000 }, () => ({})) };
  expect(refused(parse(million))).toBe('1000000 policies (at most 1000)');
  const details = {
    ...policy,
    'failure-details': Array.from({ length: 1001 }, () => policy['failure-details'][0]),
  };
  expect(refused(parse({ ...doc, policies: [details] }))).toBe(
    '1001 failure-details in one policy (at most 1000)',
  );
});

test('bad dates, negative counts, missing fields: refused with the field named', () => {
  // [path, new value (undefined: removed), the reason expected]
  const cases: [(string | number)[], unknown, RegExp][] = [
    [['date-range', 'start-datetime'], 'yesterday', /date-range\.start-datetime: not an RFC 3339/],
    [['date-range', 'end-datetime'], '2023-11-14T00:00:00Z', /ends before it starts/],
    [['date-range', 'end-datetime'], '2999-01-01T00:00:00Z', /date out of range/],
    [['policies', 0, 'summary', 'total-failure-session-count'], -3, /total-failure-session-count/],
    [['policies', 0, 'failure-details', 0, 'failed-session-count'], 1.5, /failed-session-count/],
    [['report-id'], undefined, /report-id/],
    [['policies', 0, 'summary'], undefined, /summary/],
    [['policies', 0, 'policy', 'policy-domain'], 'not a domain', /policy-domain/],
    [['policies'], [], /no policies/],
  ];
  for (const [path, value, reason] of cases) {
    const doc = googleDoc();
    let parent: Record<string | number, unknown> = doc;
    for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
    const last = path[path.length - 1]!;
    if (value === undefined) Reflect.deleteProperty(parent, last);
    else parent[last] = value;
    expect(refused(parse(doc))).toMatch(reason);
  }
  expect(refused(parseTlsRpt(Buffer.from('{"organization-name": ')))).toMatch(/^JSON: /);
  expect(refused(parseTlsRpt(Buffer.from('[1,2]')))).toBe('not a JSON object');
});
