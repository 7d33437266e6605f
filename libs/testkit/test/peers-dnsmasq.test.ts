import { Resolver } from 'node:dns/promises';
import { type Dnsmasq, dnsmasqConfig, startDnsmasq, txtStrings } from '../peers/dnsmasq';

/** The dnsmasq test peer itself: what other tests rely on. */
describe('dnsmasq test peer', () => {
  let dns: Dnsmasq;
  let resolver: Resolver;
  const long = `v=DKIM1; k=rsa; p=${'A'.repeat(300)}${'B'.repeat(100)}`;

  beforeAll(async () => {
    dns = await startDnsmasq({
      txt: [
        { name: 'sel._domainkey.example.test', value: long },
        { name: 'example.test', value: 'v=spf1 include:_spf.mailyard.test ~all' },
        { name: 'quote.example.test', value: 'say "hi", \\ ok' },
      ],
      mx: [{ name: 'example.test', host: 'mx.mailyard.test', preference: 5 }],
      a: [{ name: 'host.example.test', ip: '192.0.2.10' }],
    });
    resolver = new Resolver({ timeout: 1000, tries: 1 });
    resolver.setServers([dns.server]);
  });
  afterAll(async () => {
    await dns?.stop();
  });

  it('writes dnsmasq lines, splitting TXT values into strings of at most 255 bytes', () => {
    expect(txtStrings('a'.repeat(300))).toBe(`"${'a'.repeat(255)}","${'a'.repeat(45)}"`);
    expect(
      dnsmasqConfig({ mx: [{ name: 'x.test', host: 'mx.test' }], a: [{ name: 'h.test', ip: '192.0.2.1' }] }),
    ).toContain('mx-host=x.test,mx.test,10\nhost-record=h.test,192.0.2.1');
  });

  it('serves long TXT records as several character-strings that join back to the value', async () => {
    const [chunks] = await resolver.resolveTxt('sel._domainkey.example.test');
    expect(chunks!.length).toBeGreaterThan(1);
    for (const c of chunks!) expect(Buffer.byteLength(c)).toBeLessThanOrEqual(255);
    expect(chunks!.join('')).toBe(long);
    expect(await resolver.resolveTxt('quote.example.test')).toEqual([['say "hi", \\ ok']]);
  });

  it('serves MX and A records, and NXDOMAIN / NODATA for everything else (never forwarded)', async () => {
    expect(await resolver.resolveMx('example.test')).toEqual([{ exchange: 'mx.mailyard.test', priority: 5 }]);
    expect(await resolver.resolve4('host.example.test')).toEqual(['192.0.2.10']);
    await expect(resolver.resolveTxt('unknown.example.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(resolver.resolveTxt('example.com')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(resolver.resolveTxt('host.example.test')).rejects.toMatchObject({ code: 'ENODATA' });
  });

  it('replaces its records on setRecords, on the same port', async () => {
    const port = dns.port;
    await dns.setRecords({ txt: [{ name: 'new.example.test', value: 'fresh' }] });
    expect(dns.port).toBe(port);
    expect(await resolver.resolveTxt('new.example.test')).toEqual([['fresh']]);
    await expect(resolver.resolveTxt('quote.example.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });
});
