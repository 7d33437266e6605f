/**
 * Inbound routing API (docs/api/inbound.md) on the gateway: verified-domain rule, URL check,
 * sealed and masked headers, update with at least one field, username rules (2-64 chars, the
 * allowed set, stored lowercase, duplicates 409), tenancy (another tenant's domain is 404).
 */
import { InboundErrorText } from '@mailyard/contracts';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { useGateway } from './support/harness';

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(() => receiver.close());

describe.each(['embedded', 'servers'] as const)('inbound API (%s)', (mode) => {
  const gw = useGateway(mode, { WEBHOOK_ALLOW_INSECURE: '1' });

  const addDomain = async (name: string, verified: boolean) => {
    await gw.post('/v1/domain/add', { domain: name }).expect((r) => expect(r.status).toBeLessThan(300));
    if (verified)
      await gw.ctx.db.query('UPDATE domains SET verified = true WHERE tenant_id = $1 AND name = $2', [
        gw.tenantId,
        name,
      ]);
  };

  beforeAll(async () => {
    await addDomain('in.example.com', true);
    await addDomain('unverified.example.com', false);
  });

  it('configures a verified domain; GET shows url, method, masked headers, wildcard false', async () => {
    const res = await gw
      .post('/v1/inbound/relay_webhook', {
        domain: 'IN.example.com',
        url: receiver.url('/inbound'),
        method: 'post',
        headers: { 'X-Auth': 'secret-value' },
      })
      .expect(200);
    expect(res.body).toEqual({ success: true, message: expect.any(String) });
    const got = await gw.get('/v1/inbound/in.example.com').expect(200);
    expect(got.body).toEqual({
      domain: 'in.example.com',
      url: receiver.url('/inbound'),
      method: 'POST',
      headers: { 'X-Auth': '********' },
      wildcard: false,
    });
    expect(JSON.stringify(got.body)).not.toContain('secret-value');
    const { rows } = await gw.ctx.db.query<{ headers_sealed: Buffer }>(
      'SELECT headers_sealed FROM inbound_domains WHERE domain = $1',
      ['in.example.com'],
    );
    expect(rows[0]?.headers_sealed.toString('latin1')).not.toContain('secret-value');
    await gw
      .post('/v1/inbound/relay_webhook', {
        domain: 'in.example.com',
        url: receiver.url('/x'),
        method: 'POST',
      })
      .expect(409);
  });

  it('refuses unverified, unknown and invalid domains, bad methods and unreachable URLs', async () => {
    const base = { url: receiver.url('/inbound'), method: 'POST' };
    const unverified = await gw.post('/v1/inbound/relay_webhook', {
      ...base,
      domain: 'unverified.example.com',
    });
    expect(unverified.status).toBe(422);
    expect(unverified.body).toEqual({ success: false, error: InboundErrorText.domainNotVerified });
    await gw.post('/v1/inbound/relay_webhook', { ...base, domain: 'nope.example.com' }).expect(404);
    await gw.post('/v1/inbound/relay_webhook', { ...base, domain: 'not a domain' }).expect(400);
    const method = await gw.post('/v1/inbound/relay_webhook', {
      ...base,
      domain: 'unverified.example.com',
      method: 'HEAD',
    });
    expect(method.body.error).toBe(InboundErrorText.methodInvalid);
    await gw.put('/v1/inbound/update/in.example.com', { url: 'ftp://x.example' }).expect(400);
  });

  it('updates: at least one field, headers replace, wildcard toggles; other tenant sees 404', async () => {
    const empty = await gw.put('/v1/inbound/update/in.example.com', {}).expect(400);
    expect(empty.body.error).toBe(InboundErrorText.updateEmpty);
    await gw
      .put('/v1/inbound/update/in.example.com', { wildcard: true, headers: { 'X-New': 'v' }, method: 'PUT' })
      .expect(200);
    const got = await gw.get('/v1/inbound/in.example.com').expect(200);
    expect(got.body).toMatchObject({ method: 'PUT', headers: { 'X-New': '********' }, wildcard: true });
    await gw.get('/v1/inbound/in.example.com', gw.otherKey).expect(404);
    await gw.put('/v1/inbound/update/in.example.com', { wildcard: false }, gw.otherKey).expect(404);
    await gw.put('/v1/inbound/update/in.example.com', { wildcard: false }).expect(200);
  });

  it('usernames: rules, lowercase, duplicates 409, update by full address, list', async () => {
    for (const bad of ['a', 'x'.repeat(65), 'has space', 'at@sign', 'hash#', '']) {
      const res = await gw
        .post('/v1/inbound/username', { user_name: bad, domain: 'in.example.com' })
        .expect(400);
      expect(res.body.success).toBe(false);
    }
    await gw
      .post('/v1/inbound/username', { user_name: 'Support.Team+1', domain: 'in.example.com' })
      .expect(200);
    await gw
      .post('/v1/inbound/username', { user_name: 'x'.repeat(64), domain: 'in.example.com' })
      .expect(200);
    const dup = await gw.post('/v1/inbound/username', {
      user_name: 'support.team+1',
      domain: 'in.example.com',
    });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toBe(InboundErrorText.usernameExists);
    await gw.post('/v1/inbound/username', { user_name: 'ab', domain: 'unverified.example.com' }).expect(404);
    await gw
      .put(`/v1/inbound/username/update/${encodeURIComponent('SUPPORT.team+1@in.example.com')}`, {
        domain: 'in.example.com',
        active: false,
        strict_replies: true,
      })
      .expect(200);
    await gw
      .put('/v1/inbound/username/update/nobody@in.example.com', { domain: 'in.example.com', active: false })
      .expect(404);
    await gw
      .put('/v1/inbound/username/update/support.team+1@in.example.com', { domain: 'other.example.com' })
      .expect(400);
    const list = await gw.get('/v1/inbound/username/in.example.com').expect(200);
    expect(list.body).toEqual({
      success: true,
      emails: [
        { username: 'support.team+1', active: false, strict_replies: true },
        { username: 'x'.repeat(64), active: true, strict_replies: false },
      ],
    });
    await gw.get('/v1/inbound/username/in.example.com', gw.otherKey).expect(404);
  });
});
