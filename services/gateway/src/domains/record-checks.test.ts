import type { DnsResult } from '@mailyard/platform';
import type { DnsSettings } from './dns-records';
import { checkDkim, checkDmarc, checkMx, checkSpf, dkimTags } from './record-checks';

const txt = (...records: string[]): DnsResult<string> => ({ ok: true, records });
const fail = (failure: 'nxdomain' | 'nodata' | 'timeout' | 'error', code = 'X'): DnsResult<never> => ({
  ok: false,
  failure,
  code,
});
const settings: DnsSettings = {
  spfInclude: '_spf.mailyard.test',
  sendingIps: [],
  mxHost: 'mx.mailyard.test',
  dmarcRua: 'dmarc@mailyard.test',
};

describe('DKIM check', () => {
  const name = 's._domainkey.example.com';
  it('parses tag lists, ignoring whitespace inside values', () => {
    expect(dkimTags('v=DKIM1; k=rsa;\tp=AB CD\n EF')).toEqual(
      new Map([
        ['v', 'DKIM1'],
        ['k', 'rsa'],
        ['p', 'ABCDEF'],
      ]),
    );
  });
  it.each([
    [txt('v=DKIM1; k=rsa; p=KEY'), { verified: true }],
    [txt('p=KEY'), { verified: true }],
    [txt('unrelated', 'v=DKIM1; p=K E Y'), { verified: true }],
    [
      txt('v=DKIM1; k=rsa; p=OTHER'),
      { verified: false, reason: `DKIM public key at ${name} does not match the key issued for this domain` },
    ],
    [txt('v=DKIM1; k=rsa; p='), { verified: false, reason: `DKIM key at ${name} is revoked (empty p=)` }],
    [
      txt('v=DKIM1; k=ed25519; p=KEY'),
      { verified: false, reason: `DKIM record at ${name} has the right key but a wrong v= or k= tag` },
    ],
    [txt('hello'), { verified: false, reason: `TXT record at ${name} is not a DKIM key record (no p= tag)` }],
    [fail('nodata'), { verified: false, reason: `No TXT record at ${name}` }],
    [fail('timeout'), { verified: false, inconclusive: true, reason: `DNS lookup of TXT ${name} timed out` }],
    [
      fail('error', 'ESERVFAIL'),
      { verified: false, inconclusive: true, reason: `DNS lookup of TXT ${name} failed (ESERVFAIL)` },
    ],
  ])('%j -> %j', (lookup, outcome) => {
    expect(checkDkim(name, 'KEY', lookup)).toEqual(outcome);
  });
});

describe('SPF check', () => {
  const d = 'example.com';
  it.each([
    ['v=spf1 include:_spf.mailyard.test ~all', true],
    ['V=SPF1 +include:_SPF.Mailyard.test -all', true],
    ['v=spf1 redirect=_spf.mailyard.test', true],
    ['v=spf1 +all', true],
    ['v=spf1 -include:_spf.mailyard.test ~all', false],
    ['v=spf1 include:_spf.google.com ~all', false],
    ['v=spf1', false],
  ])('%s -> %s', (record, verified) => {
    expect(checkSpf(d, [], settings, txt('other', record)).verified).toBe(verified);
  });

  it('accepts ip4/ip6 mechanisms covering every required address, CIDR included', () => {
    const ipOnly: DnsSettings = { ...settings, spfInclude: null };
    expect(checkSpf(d, ['203.0.113.7'], ipOnly, txt('v=spf1 ip4:203.0.113.0/24 -all')).verified).toBe(true);
    expect(
      checkSpf(
        d,
        ['203.0.113.7', '2001:db8::1'],
        ipOnly,
        txt('v=spf1 ip4:203.0.113.7 ip6:2001:db8::/32 -all'),
      ).verified,
    ).toBe(true);
    expect(checkSpf(d, ['198.51.100.0/24'], ipOnly, txt('v=spf1 ip4:198.51.0.0/16 -all')).verified).toBe(
      true,
    );
    expect(checkSpf(d, ['198.51.0.0/16'], ipOnly, txt('v=spf1 ip4:198.51.100.0/24 -all'))).toEqual({
      verified: false,
      reason: 'SPF record at example.com does not authorize this service; add ip4:198.51.0.0/16',
    });
    expect(
      checkSpf(d, ['203.0.113.7', '203.0.113.8'], ipOnly, txt('v=spf1 ip4:203.0.113.7 -all')).reason,
    ).toBe('SPF record at example.com does not authorize this service; add ip4:203.0.113.8');
    // With an include configured, either the include or the addresses authorize.
    expect(checkSpf(d, ['203.0.113.7'], settings, txt('v=spf1 ip4:203.0.113.7 -all')).verified).toBe(true);
    // Nothing configured to look for: any single SPF record passes.
    expect(checkSpf(d, [], ipOnly, txt('v=spf1 -all')).verified).toBe(true);
  });

  it('explains a missing, doubled or unreachable record', () => {
    expect(checkSpf(d, [], settings, txt('google-site-verification=x')).reason).toBe(
      'No SPF record (TXT starting with v=spf1) at example.com',
    );
    expect(checkSpf(d, [], settings, fail('nodata')).reason).toBe(
      'No SPF record (TXT starting with v=spf1) at example.com',
    );
    expect(
      checkSpf(d, [], settings, txt('v=spf1 -all', 'v=spf1 include:_spf.mailyard.test -all')).reason,
    ).toMatch(/^2 SPF records at example\.com; publish exactly one/);
    expect(checkSpf(d, [], settings, fail('timeout'))).toEqual({
      verified: false,
      inconclusive: true,
      reason: 'DNS lookup of TXT example.com timed out (SPF)',
    });
  });
});

describe('DMARC and MX checks', () => {
  it('DMARC needs a v=DMARC1 record whose rua= names our report address', () => {
    const check = (...records: string[]) =>
      checkDmarc('_dmarc.example.com', 'dmarc@mailyard.test', txt(...records));
    expect(check('v=DMARC1; p=none; rua=mailto:dmarc@mailyard.test').verified).toBe(true);
    expect(
      check('v=DMARC1; p=reject; rua=mailto:agg@example.com, mailto:DMARC@Mailyard.test!10m').verified,
    ).toBe(true);
    expect(check('v=DMARC1;p=quarantine;rua=mailto:dmarc%40mailyard.test').verified).toBe(true);
    expect(check('v=spf1 -all', 'v=DMARC1; rua=mailto:dmarc@mailyard.test').verified).toBe(true);
    // The owner's own record is kept: the reason says to add our address, not to replace it.
    expect(check('v=DMARC1; p=reject; rua=mailto:agg@example.com')).toEqual({
      verified: false,
      reason:
        'DMARC record at _dmarc.example.com does not send aggregate reports to this service: keep the record and add mailto:dmarc@mailyard.test to its rua= tag (comma separated after any address it has) (recommended, not required for verification)',
    });
    expect(check('v=DMARC1').verified).toBe(false);
    expect(check('v=DMARC1; rua=mailto:%zz').verified).toBe(false);
    expect(check('v=DMARC1; ruf=mailto:dmarc@mailyard.test').verified).toBe(false);
    expect(check('v=spf1').reason).toMatch(/^No DMARC record .*recommended, not required/);
  });
  it('MX must point at the inbound host', () => {
    const mx = (...hosts: string[]) => ({
      ok: true as const,
      records: hosts.map((exchange, i) => ({ exchange, priority: i })),
    });
    expect(checkMx('example.com', 'mx.mailyard.test', mx('other.example', 'mx.mailyard.test')).verified).toBe(
      true,
    );
    expect(checkMx('example.com', 'mx.mailyard.test', mx('other.example')).reason).toBe(
      'MX records of example.com point at other.example, not mx.mailyard.test (needed only to receive inbound email)',
    );
    expect(checkMx('example.com', 'mx.mailyard.test', fail('nxdomain')).reason).toBe(
      'No MX record at example.com: the name does not exist (NXDOMAIN) (needed only to receive inbound email)',
    );
  });
});
