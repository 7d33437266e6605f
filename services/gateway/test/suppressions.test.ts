import { isSuppressed } from '@mailyard/store';
import { MODES } from '@mailyard/testkit/modes';
import request from 'supertest';
import { useGateway } from './support/harness';

/** POST /v1/email/unsubscribe and /v1/email/subscribe, and the store's isSuppressed. */
for (const mode of MODES) {
  describe(`subscribe / unsubscribe API (${mode})`, () => {
    const gw = useGateway(mode);

    const post = (path: 'subscribe' | 'unsubscribe', body: unknown, k = gw.key) =>
      gw.post(`/v1/email/${path}`, body as object, k);
    const rows = async (t = gw.tenantId) =>
      (
        await gw.ctx.db.query<{ email: string; reason: string }>(
          'SELECT email, reason FROM suppressions WHERE tenant_id = $1 ORDER BY email',
          [t],
        )
      ).rows;

    it('round-trips an address: unsubscribe suppresses it (lowercased), subscribe lifts it', async () => {
      const off = await post('unsubscribe', { email: 'Jane.Doe@Example.COM' });
      expect(off.status).toBe(200);
      expect(off.body).toEqual({ success: true, message: 'jane.doe@example.com unsubscribed' });
      expect(await rows()).toEqual([{ email: 'jane.doe@example.com', reason: 'unsubscribe' }]);
      expect([
        ...(await isSuppressed(gw.ctx.db, gw.tenantId, ['JANE.DOE@example.com', 'other@example.com'])),
      ]).toEqual(['jane.doe@example.com']);

      const on = await post('subscribe', { email: 'jane.doe@example.com' });
      expect(on.status).toBe(200);
      expect(on.body).toEqual({ success: true, message: 'jane.doe@example.com subscribed' });
      expect(await rows()).toEqual([]);
      expect((await isSuppressed(gw.ctx.db, gw.tenantId, ['jane.doe@example.com'])).size).toBe(0);
    });

    it('is idempotent both ways', async () => {
      expect((await post('unsubscribe', { email: 'twice@example.com' })).status).toBe(200);
      expect((await post('unsubscribe', { email: 'TWICE@example.com' })).status).toBe(200);
      expect(await rows()).toEqual([{ email: 'twice@example.com', reason: 'unsubscribe' }]);
      expect((await post('subscribe', { email: 'twice@example.com' })).status).toBe(200);
      expect((await post('subscribe', { email: 'twice@example.com' })).status).toBe(200);
      expect((await post('subscribe', { email: 'never@example.com' })).body).toEqual({
        success: true,
        message: 'never@example.com subscribed',
      });
      expect(await rows()).toEqual([]);
    });

    it('stores IDN domains in ASCII form', async () => {
      await post('unsubscribe', { email: 'Max@Bücher.Example' });
      expect(await rows()).toEqual([{ email: 'max@xn--bcher-kva.example', reason: 'unsubscribe' }]);
      expect((await isSuppressed(gw.ctx.db, gw.tenantId, ['max@xn--bcher-kva.example'])).size).toBe(1);
      await post('subscribe', { email: 'max@bücher.example' });
      expect(await rows()).toEqual([]);
    });

    it('keeps suppressions per tenant', async () => {
      const other = await gw.newTenant();
      await post('unsubscribe', { email: 'shared@example.com' }, other.apiKey);
      expect(await rows()).toEqual([]);
      expect((await isSuppressed(gw.ctx.db, gw.tenantId, ['shared@example.com'])).size).toBe(0);
      expect((await isSuppressed(gw.ctx.db, other.tenantId, ['shared@example.com'])).size).toBe(1);
      await post('subscribe', { email: 'shared@example.com' });
      expect(await rows(other.tenantId)).toEqual([{ email: 'shared@example.com', reason: 'unsubscribe' }]);
    });

    it('answers isSuppressed for many addresses in one call, and for none', async () => {
      for (const e of ['a@x.test', 'c@x.test']) await post('unsubscribe', { email: e });
      const set = await isSuppressed(gw.ctx.db, gw.tenantId, [
        'a@x.test',
        'b@x.test',
        'C@X.test',
        'a@x.test',
      ]);
      expect([...set].sort()).toEqual(['a@x.test', 'c@x.test']);
      expect((await isSuppressed(gw.ctx.db, gw.tenantId, [])).size).toBe(0);
    });

    it.each([
      ['unsubscribe', {}, 'email is required'],
      ['unsubscribe', { email: '' }, 'email is required'],
      ['unsubscribe', { email: 'nope' }, 'email must be a valid email address'],
      ['unsubscribe', { email: 42 }, 'email must be a valid email address'],
      ['subscribe', { email: 'a@x.test\r\nBcc: b@y.test' }, 'email must be a valid email address'],
      ['subscribe', {}, 'email is required'],
    ] as const)('%s %j -> 400 "%s"', async (path, body, message) => {
      const res = await post(path, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, error: message });
    });

    it('needs an API key', async () => {
      expect((await request(gw.app).post('/v1/email/unsubscribe').send({ email: 'a@x.test' })).status).toBe(
        401,
      );
      expect((await request(gw.app).post('/v1/email/subscribe').send({ email: 'a@x.test' })).status).toBe(
        401,
      );
    });
  });
}
