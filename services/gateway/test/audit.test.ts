/**
 * The audit log through the real gateway (docs/api/audit.md): every mutating /v1 route has an
 * audit rule (or a stated reason not to), a template's create/update/delete and a key's creation
 * are recorded with the key and the client address and no secret, failures record nothing,
 * another tenant sees none of it, and GET /v1/audit filters and pages like the logs query.
 */
import { AUDIT_ACTIONS, AUDIT_RESOURCES, type AuditEntry } from '@mailyard/contracts';
import { endpointKeys } from '@mailyard/testkit/app-routes';
import { MODES } from '@mailyard/testkit/modes';
import { AUDIT_TABLE, NOT_AUDITED, READ_METHODS } from '../src/audit/audit-table';
import { useGateway } from './support/harness';

const template = {
  name: 'Welcome',
  subject: 'Hi {{name}}',
  content: [{ type: 'text/plain', value: 'secret-ish body' }],
};

for (const mode of MODES) {
  describe(`audit log (${mode})`, () => {
    const gw = useGateway(mode, { WEBHOOK_ALLOW_INSECURE: '1' });

    const entries = async (query = '', key = gw.key): Promise<AuditEntry[]> => {
      const res = await gw.get(`/v1/audit${query}`, key);
      expect(res.status).toBe(200);
      return res.body.data;
    };
    const storedRows = async (tenantId = gw.tenantId) =>
      JSON.stringify(
        (await gw.ctx.db.query('SELECT * FROM audit_log WHERE tenant_id = $1', [tenantId])).rows,
      );

    if (mode === 'embedded')
      it('has a rule for every mutating /v1 route the gateway serves (or a reason not to audit it)', () => {
        const mutating = endpointKeys(gw.app).filter((k) => {
          const [method, path] = k.split(' ') as [string, string];
          return path.startsWith('/v1/') && !READ_METHODS.has(method);
        });
        expect(mutating.length).toBeGreaterThan(30);
        const missing = mutating.filter((k) => !AUDIT_TABLE[k] && !NOT_AUDITED[k]);
        expect(missing).toEqual([]);
        for (const rule of Object.values(AUDIT_TABLE)) {
          if (typeof rule.action === 'string') expect(AUDIT_ACTIONS).toContain(rule.action);
          expect(AUDIT_RESOURCES).toContain(rule.resource);
        }
      });

    it("records a template's create, update and delete with the key and the address, nothing of the body", async () => {
      const created = await gw.post('/v1/email/template', template);
      expect(created.status).toBe(201);
      const id = created.body.template_id as string;
      expect((await gw.put('/v1/email/template', { template_id: id, subject: 'Hello' })).status).toBe(200);
      expect((await gw.delete(`/v1/email/template/${id}`)).status).toBe(200);
      const keyId = (
        await gw.ctx.db.query<{ id: string }>('SELECT id FROM api_keys WHERE tenant_id = $1', [gw.tenantId])
      ).rows[0]!.id;
      const mine = (await entries('?pageSize=50')).filter((e) => e.resource_id === id);
      expect(mine).toEqual(
        ['delete', 'update', 'create'].map((action) => ({
          at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
          key_id: keyId,
          action,
          resource: 'template',
          resource_id: id,
          ip: expect.stringMatching(/127\.0\.0\.1|::1/),
        })),
      );
      const stored = await storedRows();
      for (const secretish of [gw.key, 'secret-ish body', 'Hi {{name}}'])
        expect(stored).not.toContain(secretish);
    });

    it('records a key creation and a webhook registration without their secrets; failed changes record nothing', async () => {
      const key = await gw.post('/v1/keys', { name: 'ci', scope: 'send' });
      expect(key.status).toBe(201);
      const [latest] = await entries('?pageSize=1');
      expect(latest).toMatchObject({ action: 'create', resource: 'api_key', resource_id: key.body.key_id });
      const revoked = await gw.delete(`/v1/keys/${key.body.key_id}`);
      expect(revoked.status).toBe(200);
      expect((await entries('?pageSize=1'))[0]).toMatchObject({
        action: 'delete',
        resource: 'api_key',
        resource_id: key.body.key_id,
      });
      const stored = await storedRows();
      expect(stored).not.toContain(key.body.api_key);

      const before = await storedRows();
      expect((await gw.delete('/v1/email/template/template_01JD5K7ZQ3X0V8Y2N4M6P8R0TG')).status).toBe(404);
      expect((await gw.post('/v1/email/template', { name: '' })).status).toBe(400);
      expect(await storedRows()).toEqual(before);
    });

    it('another tenant sees none of it, and its own changes only', async () => {
      expect((await entries('', gw.key)).length).toBeGreaterThan(0);
      expect(await entries('', gw.otherKey)).toEqual([]);
      const created = await gw.post('/v1/email/template', template, gw.otherKey);
      const theirs = await entries('', gw.otherKey);
      expect(theirs).toEqual([
        expect.objectContaining({ action: 'create', resource_id: created.body.template_id }),
      ]);
      const mine = await entries('?pageSize=50');
      expect(mine.map((e) => e.resource_id)).not.toContain(created.body.template_id);
    });

    it('pages newest first without gaps or repeats, and filters by action and date', async () => {
      const t = await gw.newTenant();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push(
          (await gw.post('/v1/email/template', { ...template, name: `t${i}` }, t.apiKey)).body.template_id,
        );
      await gw.delete(`/v1/email/template/${ids[0]}`, t.apiKey);
      const seen: AuditEntry[] = [];
      let token: string | null = null;
      do {
        const q: string = `?pageSize=2${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`;
        const res = await gw.get(`/v1/audit${q}`, t.apiKey);
        expect(res.status).toBe(200);
        expect(res.body.data.length).toBeLessThanOrEqual(2);
        seen.push(...res.body.data);
        token = res.body.nextPageToken;
      } while (token);
      expect(seen.map((e) => `${e.action} ${e.resource_id}`)).toEqual([
        `delete ${ids[0]}`,
        ...[...ids].reverse().map((id) => `create ${id}`),
      ]);
      expect((await entries('?action=delete', t.apiKey)).map((e) => e.resource_id)).toEqual([ids[0]]);
      const today = new Date().toISOString().slice(0, 10);
      expect(await entries(`?startDate=${today}&endDate=${today}`, t.apiKey)).toHaveLength(6);
      expect(await entries('?endDate=2020-01-01', t.apiKey)).toEqual([]);
    });

    it('answers bad queries with 400 envelopes', async () => {
      const cases: Array<[string, string]> = [
        ['?startDate=yesterday', 'startDate must be an RFC 3339 date-time or a YYYY-MM-DD date'],
        ['?startDate=2026-02-03&endDate=2026-02-01', 'startDate must not be after endDate'],
        ['?action=explode', `action must be one of ${AUDIT_ACTIONS.join(', ')}`],
        ['?pageSize=0', 'pageSize must be an integer between 1 and 50'],
        ['?pageToken=nope', 'Invalid pageToken'],
      ];
      for (const [q, error] of cases) {
        const res = await gw.get(`/v1/audit${q}`);
        expect({ q, status: res.status, body: res.body }).toEqual({
          q,
          status: 400,
          body: { success: false, error },
        });
      }
    });
  });
}

describe('audit log client address (TRUST_PROXY)', () => {
  const trusting = useGateway('embedded', { TRUST_PROXY: 'loopback' });
  const plain = useGateway('embedded');

  it('records X-Forwarded-For only from a trusted proxy', async () => {
    for (const gw of [trusting, plain])
      expect(
        (await gw.post('/v1/email/template', template).set('X-Forwarded-For', '203.0.113.9')).status,
      ).toBe(201);
    const ipOf = async (gw: typeof plain) => (await gw.get('/v1/audit')).body.data[0].ip;
    expect(await ipOf(trusting)).toBe('203.0.113.9');
    expect(await ipOf(plain)).toMatch(/127\.0\.0\.1|::1/);
  });
});
