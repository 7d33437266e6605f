import { createPublicKey } from 'node:crypto';
import { loadSendingMailer } from '@mailyard/store';
import { MODES } from '@mailyard/testkit/modes';
import { startDnsmasq } from '@mailyard/testkit/peers/dnsmasq';
import request from 'supertest';
import { buildGatewayApp } from '../src/app';
import { bearer, useGateway } from './support/harness';

const ULID = '[0-9A-HJKMNP-TV-Z]{26}';

/** The domains API without DNS (add, details, list, delete, validation, tenancy); run in both modes. */
for (const mode of MODES) {
  describe(`domains API (${mode})`, () => {
    const gw = useGateway(mode, { SERVICE_DOMAIN: 'mailyard.test' });

    const add = (body: object, k = gw.key) => gw.post('/v1/domain/add', body, k);
    const get = (domain: string, k = gw.key) => gw.get(`/v1/domain/${encodeURIComponent(domain)}`, k);

    it('adds a domain: an RSA-2048 DKIM key, its mailer and the records to publish', async () => {
      const res = await add({ domain: 'Example.COM' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ success: true, message: expect.any(String) });
      const data = res.body.data;
      expect(data).toMatchObject({
        domain: 'example.com',
        unicode_domain: 'example.com',
        mailer_id: expect.stringMatching(new RegExp(`^domain_${ULID}$`)),
        verified: false,
        selector: 'mailyard',
        state: 'active',
        custom_args: null,
        is_tenant_domain: false,
        is_tenant_subdomain: false,
        shared_with_subaccounts: false,
        ips: [],
        last_checked_at: null,
      });
      const [dkim, spf, dmarc, mx] = data.records;
      expect(data.records.map((r: { purpose: string }) => r.purpose)).toEqual(['dkim', 'spf', 'dmarc', 'mx']);
      expect(dkim).toMatchObject({
        type: 'TXT',
        name: 'mailyard._domainkey.example.com',
        required: true,
        verified: false,
      });
      expect(dkim.value).toMatch(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+=*$/);
      const p = dkim.value.split('p=')[1];
      const publicKey = createPublicKey({ key: Buffer.from(p, 'base64'), format: 'der', type: 'spki' });
      expect(publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
      expect(spf).toMatchObject({
        type: 'TXT',
        name: 'example.com',
        value: 'v=spf1 include:_spf.mailyard.test ~all',
        required: true,
      });
      expect(dmarc).toMatchObject({
        type: 'TXT',
        name: '_dmarc.example.com',
        value: 'v=DMARC1; p=none; rua=mailto:dmarc@mailyard.test',
        required: false,
      });
      expect(mx).toMatchObject({
        type: 'MX',
        name: 'example.com',
        value: 'mailyard.test',
        priority: 10,
        required: false,
      });
      for (const r of data.records) expect(r.reason).toMatch(/Not checked yet/);
      expect(JSON.stringify(res.body)).not.toMatch(/PRIVATE KEY/);

      const details = await get('example.com');
      expect(details.status).toBe(200);
      expect(details.body).toEqual({ success: true, data });
    });

    it('takes every optional field of the spec', async () => {
      const res = await add({
        domain: 'opts.example.org',
        custom_args: { team: 'billing', n: 1 },
        is_tenant_domain: true,
        is_tenant_subdomain: true,
        shared_with_subaccounts: true,
        ips: ['203.0.113.7', '2001:db8::25'],
        selector: 'S2024',
      });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({
        custom_args: { team: 'billing', n: 1 },
        is_tenant_domain: true,
        is_tenant_subdomain: true,
        shared_with_subaccounts: true,
        ips: ['203.0.113.7', '2001:db8::25'],
        selector: 's2024',
      });
      expect(res.body.data.records[0].name).toBe('s2024._domainkey.opts.example.org');
      expect(res.body.data.records[1].value).toBe(
        'v=spf1 ip4:203.0.113.7 ip6:2001:db8::25 include:_spf.mailyard.test ~all',
      );
    });

    it('accepts internationalised names (IDNA) and finds them by either form', async () => {
      const res = await add({ domain: 'Bücher.example' });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({
        domain: 'xn--bcher-kva.example',
        unicode_domain: 'bücher.example',
      });
      expect(res.body.data.records[0].name).toBe('mailyard._domainkey.xn--bcher-kva.example');
      expect((await get('bücher.example')).body.data.mailer_id).toBe(res.body.data.mailer_id);
      expect((await get('xn--bcher-kva.example')).body.data.mailer_id).toBe(res.body.data.mailer_id);
      const again = await add({ domain: 'xn--bcher-kva.example' });
      expect(again.status).toBe(409);
    });

    it('refuses a duplicate per tenant with 409, whatever the spelling', async () => {
      expect((await add({ domain: 'dup.example.net' })).status).toBe(201);
      for (const spelling of ['dup.example.net', 'DUP.example.net.', ' dup.EXAMPLE.net ']) {
        const res = await add({ domain: spelling });
        expect(res.status).toBe(409);
        expect(res.body).toEqual({ success: false, error: 'Domain already exists' });
      }
      // Another tenant may add the same name.
      expect((await add({ domain: 'dup.example.net' }, gw.otherKey)).status).toBe(201);
    });

    it.each([
      [{}, 'domain is required'],
      [{ domain: '  ' }, 'domain is required'],
      [{ domain: 42 }, 'domain must be a valid domain name'],
      [{ domain: 'localhost' }, 'domain must be a valid domain name'],
      [{ domain: '192.0.2.1' }, 'domain must be a valid domain name'],
      [{ domain: 'bad domain.com' }, 'domain must be a valid domain name'],
      [{ domain: 'user@example.com' }, 'domain must be a valid domain name'],
      [{ domain: 'ok.example', ips: ['999.1.1.1'] }, 'ips must be an array of IP addresses'],
      [{ domain: 'ok.example', ips: '1.2.3.4' }, 'ips must be an array of IP addresses'],
      [
        { domain: 'ok.example', selector: 'bad selector' },
        'selector must be a DNS label (letters, digits, hyphens; dots between labels)',
      ],
      [{ domain: 'ok.example', custom_args: ['a'] }, 'custom_args must be an object'],
      [{ domain: 'ok.example', is_tenant_domain: 'yes' }, 'is_tenant_domain must be a boolean'],
    ])('rejects %j with 400 "%s"', async (body, message) => {
      const res = await add(body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, error: message });
    });

    it('answers unknown and malformed names', async () => {
      expect((await get('unknown.example')).status).toBe(404);
      expect((await get('unknown.example')).body).toEqual({ success: false, error: 'Domain not found' });
      expect((await get('not a domain')).status).toBe(400);
      expect((await gw.put('/v1/domain/verify/unknown.example')).status).toBe(404);
      expect((await gw.delete('/v1/domain/unknown.example')).status).toBe(404);
      for (const [method, path] of [
        ['get', '/v1/domain'],
        ['delete', '/v1/domain/'],
        ['put', '/v1/domain/verify'],
      ] as const) {
        const res = await gw[method](path);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ success: false, error: 'domain is required' });
      }
    });

    it("reads another tenant's domain as 404 everywhere", async () => {
      const mine = (await add({ domain: 'private.example.com' })).body.data;
      expect((await get('private.example.com', gw.otherKey)).status).toBe(404);
      expect((await gw.put('/v1/domain/verify/private.example.com', undefined, gw.otherKey)).status).toBe(
        404,
      );
      expect((await gw.delete('/v1/domain/private.example.com', gw.otherKey)).status).toBe(404);
      expect((await gw.get(`/v1/mailer/${mine.mailer_id}`, gw.otherKey)).status).toBe(404);
      expect((await gw.delete(`/v1/mailer/${mine.mailer_id}`, gw.otherKey)).status).toBe(404);
      const list = await gw.get('/v1/domains?pageSize=50', gw.otherKey);
      expect(list.body.data.map((d: { domain: string }) => d.domain)).not.toContain('private.example.com');
      expect((await get('private.example.com')).status).toBe(200);
    });

    it('lists with a cursor, nextPageToken and totalCount', async () => {
      const t = await gw.newTenant();
      const names = ['a.example', 'b.example', 'c.example', 'd.example', 'e.example'];
      for (const domain of names) expect((await add({ domain }, t.apiKey)).status).toBe(201);
      const seen: string[] = [];
      let token: string | null = null;
      do {
        const url: string = `/v1/domains?pageSize=2${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`;
        const res = await gw.get(url, t.apiKey);
        expect(res.status).toBe(200);
        expect(Object.keys(res.body).sort()).toEqual(['data', 'nextPageToken', 'success', 'totalCount']);
        expect(res.body.totalCount).toBe(5);
        seen.push(...res.body.data.map((d: { domain: string }) => d.domain));
        token = res.body.nextPageToken;
      } while (token);
      expect(seen).toEqual(names);
      const bad = await gw.get('/v1/domains?pageToken=garbage', t.apiKey);
      expect(bad.status).toBe(400);
      expect((await gw.get('/v1/domains?pageSize=51', t.apiKey)).status).toBe(400);
    });

    it('is a mailer too: listed by /v1/mailers and readable by id', async () => {
      const data = (await add({ domain: 'mailer.example.com' })).body.data;
      const res = await gw.get(`/v1/mailer/${data.mailer_id}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        mailer_id: data.mailer_id,
        name: 'mailer.example.com',
        config_type: 'domain',
        connection_type: 'domain',
        state: 'active',
        config: { domain: 'mailer.example.com', selector: 'mailyard', verified: false },
      });
    });

    it('deletes: the details 404, the mailer reads as deleted to the send service, its key is wiped', async () => {
      const data = (await add({ domain: 'gone.example.com' })).body.data;
      const before = await loadSendingMailer(gw.ctx.db, gw.ctx.sealer, gw.tenantId, data.mailer_id);
      expect(before).toMatchObject({
        kind: 'domain',
        state: 'active',
        domain: 'gone.example.com',
        verified: false,
      });
      expect(before?.kind === 'domain' && before.dkimPrivateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);

      const del = await gw.delete('/v1/domain/gone.example.com');
      expect(del.status).toBe(200);
      expect(del.body).toEqual({ success: true, message: 'Domain deleted' });
      expect((await get('gone.example.com')).status).toBe(404);
      expect((await gw.get(`/v1/mailer/${data.mailer_id}`)).status).toBe(404);
      const after = await loadSendingMailer(gw.ctx.db, gw.ctx.sealer, gw.tenantId, data.mailer_id);
      expect(after).toMatchObject({ kind: 'domain', state: 'deleted', dkimPrivateKeyPem: '' });
      expect((await gw.delete('/v1/domain/gone.example.com')).status).toBe(404);

      // The name is free again: a new domain with a new mailer and key.
      const again = await add({ domain: 'gone.example.com' });
      expect(again.status).toBe(201);
      expect(again.body.data.mailer_id).not.toBe(data.mailer_id);
      expect(again.body.data.records[0].value).not.toBe(data.records[0].value);
    });

    it('verifies against DNS and writes the DOMAIN_VERIFICATION event to the outbox with the result', async () => {
      const dns = await startDnsmasq({});
      // Same stores, a resolver pointed at dnsmasq.
      const verifier = buildGatewayApp({ ...gw.ctx, config: { ...gw.config, DNS_SERVERS: [dns.server] } });
      try {
        const data = (await add({ domain: 'dns.example.com' })).body.data;
        const txt = data.records
          .filter((r: { type: string }) => r.type === 'TXT')
          .map((r: { name: string; value: string }) => ({ name: r.name, value: r.value }));
        await dns.setRecords({ txt, mx: [{ name: 'dns.example.com', host: 'mailyard.test' }] });
        const res = await request(verifier).put('/v1/domain/verify/dns.example.com').set(bearer(gw.key));
        expect(res.status).toBe(200);
        expect(res.body.data).toMatchObject({ verified: true, mailer_id: data.mailer_id });
        const { rows } = await gw.ctx.db.query<{ message: { tenant_id: string; payload: unknown } }>(
          "SELECT message FROM outbox WHERE routing_key = 'domain.verification' ORDER BY id",
        );
        expect(rows.map((r) => r.message.payload)).toContainEqual({
          event: 'DOMAIN_VERIFICATION',
          details: {
            domain: 'dns.example.com',
            verified: true,
            mailer_id: data.mailer_id,
            custom_args: {},
            webhook_id: '',
          },
        });
        expect(
          (await loadSendingMailer(gw.ctx.db, gw.ctx.sealer, gw.tenantId, data.mailer_id))?.kind === 'domain',
        ).toBe(true);
      } finally {
        await dns.stop();
      }
    });

    it('deleting the domain mailer through /v1/mailer deletes the domain', async () => {
      const data = (await add({ domain: 'viamailer.example.com' })).body.data;
      expect((await gw.delete(`/v1/mailer/${data.mailer_id}`)).status).toBe(200);
      expect((await get('viamailer.example.com')).status).toBe(404);
    });
  });
}
