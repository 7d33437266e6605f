/**
 * API keys with scopes through the real gateway (docs/api/keys.md): each scope against
 * representative routes (express's chain and the fast send route), the 403 messages, key
 * management (create shown once, list, revoke; another tenant's id is 404; the last full key
 * stays), revocation at once with a key cache on, last_used_at written by the batched flush, and
 * the admin API's optional scope.
 */
import { ErrorText } from '@mailyard/contracts';
import { createLogger } from '@mailyard/platform';
import { MODES } from '@mailyard/testkit/modes';
import request from 'supertest';
import { buildGatewayApp } from '../src/app';
import { KeyUsage } from '../src/auth/key-usage';
import { bearer, useGateway } from './support/harness';

const ADMIN = 'admin-key-for-keys-tests-0123456789';

for (const mode of MODES) {
  describe(`API keys and scopes (${mode})`, () => {
    // A key cache as in production: revocation must still be immediate on this replica.
    const gw = useGateway(mode, { API_KEY_CACHE_MS: '60000', ADMIN_API_KEY: ADMIN });

    const createKey = async (scope: string, name = `${scope} key`, key = gw.key) => {
      const res = await gw.post('/v1/keys', { name, scope }, key);
      expect(res.status).toBe(201);
      return res.body as { success: true; key_id: string; api_key: string };
    };
    const forbidden = (message: string) => ({ success: false, error: message });

    it('creates a key shown once; the list shows its name, scope and prefix, never the key', async () => {
      const created = await createKey('send', 'billing app');
      expect(created).toEqual({
        success: true,
        key_id: expect.stringMatching(/^key_/),
        api_key: expect.stringMatching(/^myk_[A-Za-z0-9_-]{43}$/),
      });
      const list = await gw.get('/v1/keys');
      expect(list.status).toBe(200);
      const entry = list.body.data.find((k: { key_id: string }) => k.key_id === created.key_id);
      expect(entry).toEqual({
        key_id: created.key_id,
        name: 'billing app',
        scope: 'send',
        prefix: created.api_key.slice(0, 10),
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        last_used_at: null,
      });
      expect(JSON.stringify(list.body)).not.toContain(created.api_key);
      // The suite tenant's own (first) key is full, as every key made before scopes existed.
      expect(list.body.data[0].scope).toBe('full');
    });

    it('a send key sends but cannot read logs, change configuration or manage keys', async () => {
      const { api_key: send } = await createKey('send');
      // The fast route: past the key and its scope, the body's problems answer 400.
      for (const path of ['/v1/email/send', '/v1/email/send?x=1', '/V1/email/send/']) {
        const res = await request(gw.app).post(path).set(bearer(send)).send({});
        expect({ path, status: res.status }).toEqual({ path, status: 400 });
      }
      expect((await gw.get('/v1/email/logs', send)).body).toEqual(forbidden(ErrorText.scopeReadData));
      const hook = await gw.post('/v1/webhook/register', { event: 'EMAIL_EVENT' }, send);
      expect({ status: hook.status, body: hook.body }).toEqual({
        status: 403,
        body: forbidden('This API key is not allowed to change configuration'),
      });
      const tpl = await gw.post('/v1/email/template', { name: 'x', subject: 'y', content: [] }, send);
      expect(tpl.status).toBe(403);
      const keys = await gw.post('/v1/keys', { name: 'more', scope: 'full' }, send);
      expect({ status: keys.status, body: keys.body }).toEqual({
        status: 403,
        body: forbidden('This API key is not allowed to manage API keys'),
      });
      // The cancel route (scheduled sends) is the send scope's too: past the scope, 404 or its own answer.
      const cancel = await gw.post('/v1/email/send/01JD5K7ZQ3X0V8Y2N4M6P8R0TF/cancel', undefined, send);
      expect(cancel.status).not.toBe(403);
    });

    it('a read key reads but cannot send, change anything or manage keys', async () => {
      const { api_key: read } = await createKey('read');
      for (const path of ['/v1/email/logs', '/v1/email/templates', '/v1/audit', '/v1/domains', '/v1/mailers'])
        expect({ path, status: (await gw.get(path, read)).status }).toEqual({ path, status: 200 });
      const send = await request(gw.app).post('/v1/email/send').set(bearer(read)).send({});
      expect({ status: send.status, body: send.body }).toEqual({
        status: 403,
        body: forbidden('This API key is not allowed to send email'),
      });
      const tpl = await gw.post('/v1/email/template', { name: 'x', subject: 'y', content: [] }, read);
      expect(tpl.body).toEqual(forbidden(ErrorText.scopeChangeConfiguration));
      expect((await gw.delete('/v1/email/template/template_x', read)).status).toBe(403);
      expect((await gw.get('/v1/keys', read)).body).toEqual(forbidden(ErrorText.scopeManageKeys));
      expect((await gw.post('/v1/keys', { name: 'k' }, read)).status).toBe(403);
    });

    it('answers bad key input with 400 envelopes', async () => {
      const cases: Array<[unknown, string]> = [
        [{ scope: 'send' }, 'name is required'],
        [{ name: '  ' }, 'name is required'],
        [{ name: 'x', scope: 'admin' }, 'scope must be one of full, send, read'],
        [{ name: 'x'.repeat(101) }, 'name must be at most 100 characters'],
        [{ name: 'a\nb' }, 'name must not contain control characters'],
      ];
      for (const [body, error] of cases) {
        const res = await gw.post('/v1/keys', body as object);
        expect({ body, status: res.status, error: res.body.error }).toEqual({ body, status: 400, error });
      }
      expect((await gw.post('/v1/keys', { name: 'x', extra: 1 })).status).toBe(400);
      expect((await gw.delete('/v1/keys/not-a-key')).body).toEqual({
        success: false,
        error: ErrorText.invalidKeyId,
      });
    });

    it("revokes a key at once (the key cache is on); another tenant's key id is 404", async () => {
      const { api_key, key_id } = await createKey('read');
      expect((await gw.get('/v1/email/templates', api_key)).status).toBe(200); // now cached
      expect((await gw.delete(`/v1/keys/${key_id}`, gw.otherKey)).body).toEqual({
        success: false,
        error: ErrorText.keyNotFound,
      });
      expect((await gw.get('/v1/email/templates', api_key)).status).toBe(200);
      const revoked = await gw.delete(`/v1/keys/${key_id}`);
      expect(revoked.body).toEqual({ success: true, message: 'API key revoked' });
      const after = await gw.get('/v1/email/templates', api_key);
      expect({ status: after.status, error: after.body.error }).toEqual({
        status: 401,
        error: ErrorText.unauthorized,
      });
      expect((await gw.delete(`/v1/keys/${key_id}`)).status).toBe(404);
      const listed = (await gw.get('/v1/keys')).body.data.map((k: { key_id: string }) => k.key_id);
      expect(listed).not.toContain(key_id);
    });

    it('never deletes the last full key; a full key may delete itself while another full key remains', async () => {
      const t = await gw.newTenant();
      const only = (await gw.get('/v1/keys', t.apiKey)).body.data;
      expect(only).toEqual([expect.objectContaining({ key_id: t.keyId, scope: 'full' })]);
      const { key_id: sendKey } = await createKey('send', 'sender', t.apiKey);
      const last = await gw.delete(`/v1/keys/${t.keyId}`, t.apiKey);
      expect({ status: last.status, error: last.body.error }).toEqual({
        status: 409,
        error: ErrorText.lastFullKey,
      });
      // Non-full keys go freely.
      expect((await gw.delete(`/v1/keys/${sendKey}`, t.apiKey)).status).toBe(200);
      const second = await createKey('full', 'second admin', t.apiKey);
      expect((await gw.delete(`/v1/keys/${t.keyId}`, t.apiKey)).status).toBe(200);
      expect((await gw.get('/v1/keys', t.apiKey)).status).toBe(401);
      const left = (await gw.get('/v1/keys', second.api_key)).body.data;
      expect(left.map((k: { key_id: string }) => k.key_id)).toEqual([second.key_id]);
      expect((await gw.delete(`/v1/keys/${second.key_id}`, second.api_key)).status).toBe(409);
    });

    it('the admin API issues full keys unless told a scope', async () => {
      const t = await gw.newTenant();
      const plain = await gw.post(`/admin/v1/tenants/${t.tenantId}/keys`, undefined, ADMIN);
      const scoped = await gw.post(
        `/admin/v1/tenants/${t.tenantId}/keys`,
        { scope: 'read', name: 'ro' },
        ADMIN,
      );
      expect([plain.status, scoped.status]).toEqual([201, 201]);
      const bad = await gw.post(`/admin/v1/tenants/${t.tenantId}/keys`, { scope: 'root' }, ADMIN);
      expect({ status: bad.status, error: bad.body.error }).toEqual({
        status: 400,
        error: 'scope must be one of full, send, read',
      });
      const list = (await gw.get('/v1/keys', t.apiKey)).body.data as Array<{ key_id: string; scope: string }>;
      const scopeOf = (id: string) => list.find((k) => k.key_id === id)?.scope;
      expect([scopeOf(plain.body.key_id), scopeOf(scoped.body.key_id)]).toEqual(['full', 'read']);
      expect((await gw.post('/v1/email/template', {}, scoped.body.api_key)).status).toBe(403);
    });

    it('keeps last_used_at without a write per request: one flush writes every key used since', async () => {
      const usage = new KeyUsage(gw.ctx.db, createLogger('keys-test', 'error'));
      const app = buildGatewayApp(gw.ctx, {}, { keyUsage: usage });
      const a = await createKey('read', 'used');
      const b = await createKey('read', 'unused');
      const lastUsed = async () => {
        const { rows } = await gw.ctx.db.query<{ id: string; last_used_at: Date | null }>(
          'SELECT id, last_used_at FROM api_keys WHERE id = ANY($1::text[])',
          [[a.key_id, b.key_id]],
        );
        return Object.fromEntries(rows.map((r) => [r.id, r.last_used_at]));
      };
      for (let i = 0; i < 3; i++)
        expect((await request(app).get('/v1/email/templates').set(bearer(a.api_key))).status).toBe(200);
      // Used, not yet flushed: nothing written per request.
      expect(await lastUsed()).toEqual({ [a.key_id]: null, [b.key_id]: null });
      await usage.flush();
      const after = await lastUsed();
      expect(after[b.key_id]).toBeNull();
      expect(after[a.key_id]).toBeInstanceOf(Date);
      const listed = (await gw.get('/v1/keys')).body.data.find(
        (k: { key_id: string }) => k.key_id === a.key_id,
      );
      expect(listed.last_used_at).toBe(after[a.key_id]!.toISOString());
      // Nothing used since: the next flush writes nothing.
      await usage.flush();
      expect(await lastUsed()).toEqual(after);
    });
  });
}
