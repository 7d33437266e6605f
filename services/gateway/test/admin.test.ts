import request from 'supertest';
import { useGateway } from './support/harness';

const ADMIN = 'admin-key-for-tests-0123456789';

describe('admin API (servers)', () => {
  const gw = useGateway('servers', { ADMIN_API_KEY: ADMIN });

  it('creates a tenant whose key works, issues and revokes more keys', async () => {
    const created = await gw.post('/admin/v1/tenants', { name: 'Acme', tier: 'enterprise' }, ADMIN);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      success: true,
      tenant_id: expect.stringMatching(/^tenant_/),
      key_id: expect.stringMatching(/^key_/),
      api_key: expect.stringMatching(/^myk_[A-Za-z0-9_-]{43}$/),
    });
    const list = await gw.get('/v1/email/templates', created.body.api_key);
    expect(list.status).toBe(200);
    expect(list.headers['x-ratelimit-limit']).toBe('1000');

    const second = await gw.post(`/admin/v1/tenants/${created.body.tenant_id}/keys`, undefined, ADMIN);
    expect(second.status).toBe(201);
    expect(second.body.tenant_id).toBe(created.body.tenant_id);
    expect(
      (await request(gw.app).get('/v1/email/templates').set('X-API-Key', second.body.api_key)).status,
    ).toBe(200);

    const revoked = await gw.delete(`/admin/v1/keys/${second.body.key_id}`, ADMIN);
    expect(revoked.status).toBe(200);
    expect(
      (await request(gw.app).get('/v1/email/templates').set('X-API-Key', second.body.api_key)).status,
    ).toBe(401);
    expect((await gw.delete(`/admin/v1/keys/${second.body.key_id}`, ADMIN)).status).toBe(404);
  });

  it('stores keys only as hashes', async () => {
    const created = await gw.post('/admin/v1/tenants', { name: 'Hashy' }, ADMIN);
    const { rows } = await gw.ctx.db.query<{ key_hash: Buffer; prefix: string }>(
      'SELECT key_hash, prefix FROM api_keys WHERE tenant_id = $1',
      [created.body.tenant_id],
    );
    expect(rows).toHaveLength(1);
    expect(Buffer.from(rows[0]!.key_hash).toString('utf8')).not.toContain(created.body.api_key);
    expect(created.body.api_key.startsWith(rows[0]!.prefix)).toBe(true);
    expect(rows[0]!.prefix.length).toBeLessThan(16);
  });

  it('rejects missing or wrong admin keys and validates input', async () => {
    expect((await request(gw.app).post('/admin/v1/tenants').send({ name: 'x' })).status).toBe(401);
    expect((await gw.post('/admin/v1/tenants', { name: 'x' }, 'wrong-admin-key-000000')).status).toBe(401);
    const bad = await gw.post('/admin/v1/tenants', { name: 'x', tier: 'gold' }, ADMIN);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ success: false, error: 'tier must be standard or enterprise' });
    expect((await gw.post('/admin/v1/tenants/tenant_nope/keys', undefined, ADMIN)).status).toBe(404);
  });

  it('does not accept a tenant API key as the admin key', async () => {
    const { apiKey } = await gw.newTenant();
    expect((await gw.post('/admin/v1/tenants', { name: 'x' }, apiKey)).status).toBe(401);
  });
});

describe('admin API switched off', () => {
  const gw = useGateway('embedded', { ADMIN_API_KEY: undefined });

  it('answers 404 when ADMIN_API_KEY is not set', async () => {
    expect((await gw.post('/admin/v1/tenants', { name: 'x' }, 'anything-at-all-0000')).status).toBe(404);
  });
});
