import { type DnsSettings, dnsSettings, expectedRecords, spfRecordValue } from './dns-records';

describe('suggested DNS records', () => {
  it('derives the SPF include and MX host from SERVICE_DOMAIN unless configured', () => {
    expect(
      dnsSettings({
        SERVICE_DOMAIN: 'Mail.Example.',
        SENDING_IPS: [],
        SPF_INCLUDE: undefined,
        INBOUND_MX_HOST: undefined,
      }),
    ).toEqual({
      spfInclude: '_spf.mail.example',
      sendingIps: [],
      mxHost: 'mail.example',
      dmarcRua: 'dmarc@mail.example',
    });
    expect(
      dnsSettings({
        SERVICE_DOMAIN: 'x.example',
        SENDING_IPS: ['192.0.2.1'],
        SPF_INCLUDE: 'none',
        INBOUND_MX_HOST: 'mx.x.example',
      }),
    ).toEqual({
      spfInclude: null,
      sendingIps: ['192.0.2.1'],
      mxHost: 'mx.x.example',
      dmarcRua: 'dmarc@x.example',
    });
  });

  it('puts the domain IPs and SENDING_IPS before the include in the SPF value', () => {
    const s: DnsSettings = {
      spfInclude: '_spf.m.test',
      sendingIps: ['192.0.2.0/28'],
      mxHost: 'm.test',
      dmarcRua: 'dmarc@m.test',
    };
    expect(spfRecordValue(['198.51.100.1', '2001:db8::1'], s)).toBe(
      'v=spf1 ip4:198.51.100.1 ip6:2001:db8::1 ip4:192.0.2.0/28 include:_spf.m.test ~all',
    );
    expect(spfRecordValue([], { ...s, spfInclude: null, sendingIps: [] })).toBe('v=spf1 ~all');
  });

  it('lists DKIM and SPF as required, DMARC (reports to our MX) and MX as suggestions', () => {
    const records = expectedRecords(
      { name: 'example.com', selector: 'sel', dkimPublicKey: 'KEY', ips: [] },
      { spfInclude: '_spf.m.test', sendingIps: [], mxHost: 'm.test', dmarcRua: 'dmarc@m.test' },
    );
    expect(
      records.map(({ purpose, type, name, value, required }) => ({ purpose, type, name, value, required })),
    ).toEqual([
      {
        purpose: 'dkim',
        type: 'TXT',
        name: 'sel._domainkey.example.com',
        value: 'v=DKIM1; k=rsa; p=KEY',
        required: true,
      },
      {
        purpose: 'spf',
        type: 'TXT',
        name: 'example.com',
        value: 'v=spf1 include:_spf.m.test ~all',
        required: true,
      },
      {
        purpose: 'dmarc',
        type: 'TXT',
        name: '_dmarc.example.com',
        value: 'v=DMARC1; p=none; rua=mailto:dmarc@m.test',
        required: false,
      },
      { purpose: 'mx', type: 'MX', name: 'example.com', value: 'm.test', required: false },
    ]);
  });
});
