import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { MAX_DMARC_RECORDS } from '@mailyard/contracts';
import { type DmarcParsed, MAX_XML_DEPTH, parseDmarcAggregate } from './dmarc-aggregate';
import { MAX_ATTACHMENT_BYTES, MAX_REPORT_BYTES, unpack } from './unpack';

const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', name));
const google = fixture('dmarc-google.xml').toString();

function refused(r: DmarcParsed): string {
  if (r.ok) throw new Error('expected a refusal');
  return r.reason;
}
const parse = (xml: string) => parseDmarcAggregate(Buffer.from(xml));

test("Google's report: metadata, policy and every record as read", () => {
  const r = parse(google);
  if (!r.ok) throw new Error(r.reason);
  expect(r.report).toEqual({
    orgName: 'google.com',
    email: 'noreply-dmarc-support@google.com',
    reportId: '5717107811868587391',
    begin: new Date(1700006400 * 1000),
    end: new Date(1700092799 * 1000),
    policy: { domain: 'brand.test', adkim: 'r', aspf: 'r', p: 'none', sp: 'none', pct: 100 },
    records: [
      {
        sourceIp: '203.0.113.25',
        count: 12,
        disposition: 'none',
        dkim: 'pass',
        spf: 'pass',
        headerFrom: 'brand.test',
        dkimAuth: [{ domain: 'brand.test', selector: 'mailyard', result: 'pass' }],
        spfAuth: [{ domain: 'bounces.brand.test', result: 'pass' }],
      },
      {
        sourceIp: '198.51.100.7',
        count: 3,
        disposition: 'none',
        dkim: 'fail',
        spf: 'fail',
        headerFrom: 'brand.test',
        dkimAuth: [],
        spfAuth: [{ domain: 'spoofer.example', result: 'softfail' }],
      },
    ],
  });
});

test("Microsoft's and Yahoo's layouts", () => {
  const ms = parseDmarcAggregate(fixture('dmarc-microsoft.xml'));
  if (!ms.ok) throw new Error(ms.reason);
  expect(ms.report.reportId).toBe('f4c1b0a2e9d84b7c9a3e5d6f7a8b9c0d');
  expect(ms.report.records).toEqual([
    {
      sourceIp: '2001:db8::25',
      count: 4,
      disposition: 'none',
      dkim: 'pass',
      spf: 'fail',
      headerFrom: 'brand.test',
      dkimAuth: [
        { domain: 'brand.test', selector: 'mailyard', result: 'pass' },
        { domain: 'esp.example', selector: 's1', result: 'pass' },
      ],
      spfAuth: [{ domain: 'bounces.brand.test', scope: 'mfrom', result: 'fail' }],
    },
  ]);
  const yahoo = parseDmarcAggregate(fixture('dmarc-yahoo.xml'));
  if (!yahoo.ok) throw new Error(yahoo.reason);
  expect(yahoo.report.policy).toEqual({
    domain: 'news.brand.test',
    adkim: 's',
    aspf: 'r',
    p: 'reject',
    sp: '',
    pct: 100,
  });
  expect(yahoo.report.reportId).toBe('1700092800.374511');
  expect(yahoo.report.records[0]).toMatchObject({ disposition: 'reject', count: 1 });
});

test('the predefined entities and character references are decoded; nothing else is', () => {
  const r = parse(google.replace('<org_name>google.com', '<org_name>AT&amp;T &#169; &#x263A; &lt;x&gt;'));
  expect(r.ok && r.report.orgName).toBe('AT&T \u00a9 \u263a <x>');
});

test('billion laughs is refused before parsing', () => {
  const lol = [
    '<?xml version="1.0"?>',
    '<!DOCTYPE lolz [',
    ' <!ENTITY lol "lol">',
    ...Array.from(
      { length: 9 },
      (_, i) => ` <!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`,
    ),
    ']>',
    '<feedback><report_metadata><org_name>&lol9;</org_name></report_metadata></feedback>',
  ].join('\n');
  expect(refused(parse(lol))).toBe('DOCTYPE or ENTITY declarations are not accepted');
});

test('external entities (XXE) are refused; an undeclared reference stays text', () => {
  const xxe = `<?xml version="1.0"?>\n<!DOCTYPE feedback [ <!ENTITY x SYSTEM "file:///etc/passwd"> ]>\n${google.replace('google.com', '&x;')}`;
  expect(refused(parse(xxe))).toBe('DOCTYPE or ENTITY declarations are not accepted');
  expect(refused(parse(google.replace('<feedback>', '<!doctype feedback>\n<feedback>')))).toMatch(/DOCTYPE/);
  const r = parse(google.replace('<org_name>google.com', '<org_name>&x;'));
  expect(r.ok && r.report.orgName).toBe('&x;');
});

test('deep nesting is refused by the parser bound', () => {
  const depth = 100_000;
  const deep = `<feedback>${'<a>'.repeat(depth)}${'</a>'.repeat(depth)}</feedback>`;
  expect(refused(parse(deep))).toMatch(/^XML: /);
  const ok = '<a>'.repeat(MAX_XML_DEPTH - 3);
  expect(
    parse(google.replace('<report_metadata>', `<report_metadata>${ok}${ok.replaceAll('<', '</')}`)).ok,
  ).toBe(true);
});

test('more records than allowed are refused before parsing; 100 MB of rows by the size cap', async () => {
  const record = google.slice(google.indexOf('<record>'), google.indexOf('</record>') + 9);
  const many = google.replace('</feedback>', `${'<record></record>'.repeat(MAX_DMARC_RECORDS)}</feedback>`);
  expect(refused(parse(many))).toBe(`more than ${MAX_DMARC_RECORDS} records`);
  const big = Buffer.from(
    google.replace(
      '</feedback>',
      `${record.repeat(Math.ceil((100 * 1024 * 1024) / record.length))}</feedback>`,
    ),
  );
  expect(big.length).toBeGreaterThan(100 * 1024 * 1024);
  expect(await unpack(big, 'report.xml')).toEqual({ ok: false, reason: 'attachment over 25 MB' });
  const gz = gzipSync(big);
  expect(gz.length).toBeLessThan(MAX_ATTACHMENT_BYTES);
  expect(await unpack(gz, 'report.xml.gz')).toEqual({
    ok: false,
    reason: `uncompressed report over ${MAX_REPORT_BYTES / 1024 / 1024} MB`,
  });
});

test('bad dates, negative or missing counts, missing fields: refused with the field named', () => {
  const cases: [string, string, RegExp][] = [
    ['<begin>1700006400</begin>', '<begin>yesterday</begin>', /date_range\.begin/],
    ['<begin>1700006400</begin>', '<begin>-5</begin>', /date_range\.begin/],
    ['<end>1700092799</end>', '<end>99999999999</end>', /date out of range/],
    ['<end>1700092799</end>', '<end>1600000000</end>', /ends before it begins/],
    ['<count>12</count>', '<count>-12</count>', /record\.0\.row\.count/],
    ['<count>12</count>', '<count>1e3</count>', /count/],
    ['<count>12</count>', '', /count/],
    ['<report_id>5717107811868587391</report_id>', '', /report_id/],
    ['<domain>brand.test</domain>\n    <adkim>', '<domain>not a domain</domain>\n    <adkim>', /domain/],
    ['<pct>100</pct>', '<pct>101</pct>', /pct/],
    ['<source_ip>203.0.113.25</source_ip>', '<source_ip>evil</source_ip>', /source_ip/],
  ];
  for (const [from, to, reason] of cases) {
    const bad = google.replace(from, to);
    expect(bad).not.toBe(google);
    expect(refused(parse(bad))).toMatch(reason);
  }
  expect(refused(parse('{"json": true}'))).toBe('not an XML document');
  expect(refused(parse('<html><body>hi</body></html>'))).toBe('no <feedback> element');
  expect(refused(parse('<feedback><report_metadata>'))).toMatch(/.+/);
});
