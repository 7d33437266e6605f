import { MODES } from '@mailyard/testkit/modes';
import request from 'supertest';
import { bearer, useGateway } from './support/harness';

/**
 * GET/POST/DELETE /v1/suppressions through the real gateway and database (both modes): list,
 * filters and pages, bulk add with existing and repeated addresses, limits and bad input,
 * 404s, case-insensitivity, URL-encoded paths, tenant isolation, and the reason the
 * unsubscribe/subscribe routes record. (End to end with real sends: test/suppressions-send.test.ts.)
 */
for (const mode of MODES) {
  describe(`suppressions API (${mode})`, () => {
    const gw = useGateway(mode);
    const enc = encodeURIComponent;

    /** A fresh tenant per test: lists and counts are then exactly what the test made. */
    const tenant = async () => {
      const t = await gw.newTenant();
      return {
        ...t,
        get: (path: string) => request(gw.app).get(path).set(bearer(t.apiKey)),
        del: (path: string) => request(gw.app).delete(path).set(bearer(t.apiKey)),
        post: (path: string, body: unknown) =>
          request(gw.app)
            .post(path)
            .set(bearer(t.apiKey))
            .send(body as object),
      };
    };

    it('bulk-adds: keyed (lowercase, ASCII domain), repeated addresses counted once, existing ones counted as existing', async () => {
      const t = await tenant();
      const first = await t.post('/v1/suppressions', {
        emails: ['Jane@Example.org', 'jane@example.ORG', 'max@bücher.example', 'zoe@example.org'],
      });
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ success: true, added: 3, existing: 0 });

      const again = await t.post('/v1/suppressions', {
        emails: ['ZOE@example.org', 'new@example.org', 'new@example.org'],
        reason: 'hard_bounce',
      });
      expect(again.body).toEqual({ success: true, added: 1, existing: 1 });

      const list = await t.get('/v1/suppressions?pageSize=50');
      expect(list.status).toBe(200);
      expect(list.body.totalCount).toBe(4);
      expect(list.body.nextPageToken).toBeNull();
      const byEmail = Object.fromEntries(
        (list.body.data as Array<{ email: string; reason: string; ref_id: string | null }>).map((e) => [
          e.email,
          [e.reason, e.ref_id],
        ]),
      );
      expect(byEmail).toEqual({
        'jane@example.org': ['manual', null],
        'max@xn--bcher-kva.example': ['manual', null],
        'zoe@example.org': ['manual', null], // keeps its first reason
        'new@example.org': ['hard_bounce', null],
      });
      // Newest first: the second batch's address leads.
      expect(list.body.data[0].email).toBe('new@example.org');
      expect(Date.parse(list.body.data[0].created_at)).not.toBeNaN();
    });

    it('adds 1000 addresses in one request; 1001 is a 400 and adds nothing', async () => {
      const t = await tenant();
      const many = (n: number) => Array.from({ length: n }, (_, i) => `user${i}@bulk.example`);
      const tooMany = await t.post('/v1/suppressions', { emails: many(1001) });
      expect(tooMany.status).toBe(400);
      expect(tooMany.body).toEqual({ success: false, error: 'emails must hold 1 to 1000 addresses' });
      expect((await t.get('/v1/suppressions')).body.totalCount).toBe(0);

      const ok = await t.post('/v1/suppressions', { emails: many(1000) });
      expect(ok.body).toEqual({ success: true, added: 1000, existing: 0 });
      expect((await t.get('/v1/suppressions?email=bulk.example')).body.totalCount).toBe(1000);
    });

    it('concurrent batches over the same addresses, in different orders, add each address once', async () => {
      const t = await tenant();
      const emails = Array.from({ length: 200 }, (_, i) => `c${i}@race.example`);
      const orders = [emails, [...emails].reverse(), [...emails.slice(100), ...emails.slice(0, 100)], emails];
      const answers = await Promise.all(orders.map((order) => t.post('/v1/suppressions', { emails: order })));
      for (const a of answers) {
        expect(a.status).toBe(200);
        expect(a.body.added + a.body.existing).toBe(200);
      }
      expect(answers.reduce((n, a) => n + a.body.added, 0)).toBe(200);
      expect((await t.get('/v1/suppressions')).body.totalCount).toBe(200);
    });

    it.each([
      [{}, 'emails is required'],
      [{ emails: [] }, 'emails must hold 1 to 1000 addresses'],
      [{ emails: 'a@x.test' }, 'emails must be an array'],
      [{ emails: ['a@x.test', 'nope'] }, 'emails[1] must be a valid email address'],
      [{ emails: ['a@x.test\r\nBcc: b@y.test'] }, 'emails[0] must be a valid email address'],
      [{ emails: [`${'a'.repeat(65)}@x.test`] }, 'emails[0] must be a valid email address'],
      [
        { emails: [`a@${['b', 'c', 'd', 'e'].map((c) => c.repeat(63)).join('.')}.test`] },
        'emails[0] must be a valid email address',
      ],
      [{ emails: [''] }, 'emails[0] must be a valid email address'],
      [{ emails: [42] }, 'emails[0] must be a string'],
      [
        { emails: ['a@x.test'], reason: 'bored' },
        'reason must be one of unsubscribe, hard_bounce, spam_complaint, manual',
      ],
      [[], 'body must be an object'],
    ])('POST %j -> 400 "%s", nothing added', async (body, error) => {
      const t = await tenant();
      const res = await t.post('/v1/suppressions', body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, error });
      expect((await t.get('/v1/suppressions')).body.totalCount).toBe(0);
    });

    it('pages newest first with a cursor, no duplicates or gaps, also across rows added in one batch', async () => {
      const t = await tenant();
      await t.post('/v1/suppressions', { emails: ['a1@p.example', 'a2@p.example', 'a3@p.example'] });
      await t.post('/v1/suppressions', { emails: ['b1@p.example', 'b2@p.example'] });
      const seen: string[] = [];
      let token: string | null = null;
      let pages = 0;
      do {
        const res = await t.get(`/v1/suppressions?pageSize=2${token ? `&pageToken=${enc(token)}` : ''}`);
        expect(res.status).toBe(200);
        expect(res.body.totalCount).toBe(5);
        seen.push(...res.body.data.map((e: { email: string }) => e.email));
        token = res.body.nextPageToken;
        pages++;
      } while (token);
      expect(pages).toBe(3);
      // Second batch first (newer); within a batch (same created_at) by address, descending.
      expect(seen).toEqual(['b2@p.example', 'b1@p.example', 'a3@p.example', 'a2@p.example', 'a1@p.example']);
    });

    it('filters by a case-insensitive part of the address and by reason; both narrow', async () => {
      const t = await tenant();
      await t.post('/v1/suppressions', {
        emails: ['jane.doe@shop.example', 'john@shop.example', 'jane@other.example'],
      });
      await t.post('/v1/suppressions', { emails: ['bounced@shop.example'], reason: 'hard_bounce' });
      await t.post('/v1/email/unsubscribe', { email: 'Left@Shop.Example' });
      const emails = async (q: string) => {
        const res = await t.get(`/v1/suppressions?${q}`);
        expect(res.status).toBe(200);
        expect(res.body.totalCount).toBe(res.body.data.length);
        return res.body.data.map((e: { email: string }) => e.email).sort();
      };
      expect(await emails('email=JANE')).toEqual(['jane.doe@shop.example', 'jane@other.example']);
      expect(await emails('email=%40shop.example')).toEqual([
        'bounced@shop.example',
        'jane.doe@shop.example',
        'john@shop.example',
        'left@shop.example',
      ]);
      expect(await emails('email=jane.doe%40shop.example')).toEqual(['jane.doe@shop.example']);
      expect(await emails('reason=hard_bounce')).toEqual(['bounced@shop.example']);
      expect(await emails('reason=unsubscribe')).toEqual(['left@shop.example']);
      expect(await emails('reason=manual&email=jane')).toEqual([
        'jane.doe@shop.example',
        'jane@other.example',
      ]);
      // LIKE's wildcards are literal characters of the search.
      expect(await emails('email=%25')).toEqual([]);
      expect(await emails('email=j_hn')).toEqual([]);
      expect(await emails('email=&reason=')).toHaveLength(5);
    });

    it.each([
      ['reason=bored', 'reason must be one of unsubscribe, hard_bounce, spam_complaint, manual'],
      ['pageSize=0', 'pageSize must be an integer between 1 and 50'],
      ['pageSize=51', 'pageSize must be an integer between 1 and 50'],
      ['pageToken=nope', 'Invalid pageToken'],
      [
        `pageToken=${Buffer.from(JSON.stringify({ v: 2, key: ["x' OR 1=1", 'a@b.c'] })).toString('base64url')}`,
        'Invalid pageToken',
      ],
      [
        `pageToken=${Buffer.from(JSON.stringify({ v: 1, after: '01JD5K7ZQ3X0V8Y2N4M6P8R0TF' })).toString('base64url')}`,
        'Invalid pageToken',
      ],
      ['email=a%0D%0ABcc:%20x', 'email must not contain control characters'],
      [`email=${'a'.repeat(255)}`, 'email must be at most 254 characters'],
    ])('GET ?%s -> 400 "%s"', async (q, error) => {
      const res = await gw.get(`/v1/suppressions?${q}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, error });
    });

    it('gets and deletes one address by its URL-encoded path, case-insensitively; 404 when not suppressed', async () => {
      const t = await tenant();
      await t.post('/v1/suppressions', { emails: ['Jane+News@Example.org', 'max@bücher.example'] });

      for (const path of [
        'jane+news@example.org',
        enc('JANE+news@example.org'),
        'jane%2Bnews%40EXAMPLE.org',
      ]) {
        const res = await t.get(`/v1/suppressions/${path}`);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({
          success: true,
          data: {
            email: 'jane+news@example.org',
            reason: 'manual',
            ref_id: null,
            created_at: expect.any(String),
          },
        });
      }
      expect((await t.get(`/v1/suppressions/${enc('Max@Bücher.Example')}`)).body.data.email).toBe(
        'max@xn--bcher-kva.example',
      );

      const missing = await t.get('/v1/suppressions/nobody%40example.org');
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ success: false, error: 'Suppression not found' });

      const removed = await t.del(`/v1/suppressions/${enc('JANE+NEWS@example.org')}`);
      expect(removed.status).toBe(200);
      expect(removed.body).toEqual({
        success: true,
        message: 'jane+news@example.org removed from the suppression list',
      });
      expect((await t.get('/v1/suppressions/jane%2Bnews%40example.org')).status).toBe(404);
      const twice = await t.del('/v1/suppressions/jane%2Bnews%40example.org');
      expect(twice.status).toBe(404);
      expect(twice.body).toEqual({ success: false, error: 'Suppression not found' });
      expect((await t.get('/v1/suppressions')).body.totalCount).toBe(1);
    });

    it.each([
      ['nope', 'email must be a valid email address'],
      ['a%40x.test%0D%0ABcc%3A%20b%40y.test', 'email must be a valid email address'],
      [`${'a'.repeat(65)}%40x.test`, 'email must be a valid email address'],
    ])('GET and DELETE /v1/suppressions/%s -> 400 "%s"', async (path, error) => {
      for (const res of [
        await gw.get(`/v1/suppressions/${path}`),
        await gw.delete(`/v1/suppressions/${path}`),
      ]) {
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ success: false, error });
      }
    });

    it('a malformed percent-encoding in the path is a 400 envelope', async () => {
      const res = await gw.get('/v1/suppressions/a%E0%A4%A');
      expect(res.status).toBe(400);
      expect(res.body.success).toBe(false);
    });

    it("keeps tenants apart: another tenant's suppression reads as 404, cannot be deleted, is not listed", async () => {
      const a = await tenant();
      const b = await tenant();
      await a.post('/v1/suppressions', { emails: ['shared@example.org', 'only-a@example.org'] });
      expect((await b.get('/v1/suppressions/shared%40example.org')).status).toBe(404);
      expect((await b.del('/v1/suppressions/only-a%40example.org')).status).toBe(404);
      expect((await b.get('/v1/suppressions')).body).toEqual({
        success: true,
        data: [],
        nextPageToken: null,
        totalCount: 0,
      });
      // b's own suppression of the same address is its own row.
      expect((await b.post('/v1/suppressions', { emails: ['shared@example.org'] })).body).toMatchObject({
        added: 1,
      });
      expect((await b.del('/v1/suppressions/shared%40example.org')).status).toBe(200);
      expect((await a.get('/v1/suppressions/shared%40example.org')).status).toBe(200);
      expect((await a.get('/v1/suppressions')).body.totalCount).toBe(2);
      // A page token of one tenant pages nothing of another's.
      await a.post('/v1/suppressions', { emails: ['x1@example.org', 'x2@example.org'] });
      const token = (await a.get('/v1/suppressions?pageSize=1')).body.nextPageToken as string;
      expect((await b.get(`/v1/suppressions?pageToken=${enc(token)}`)).body.data).toEqual([]);
    });

    it('the unsubscribe route records reason unsubscribe; subscribe removes whatever the reason', async () => {
      const t = await tenant();
      await t.post('/v1/email/unsubscribe', { email: 'Reader@Example.org' });
      expect((await t.get('/v1/suppressions/reader%40example.org')).body.data).toMatchObject({
        email: 'reader@example.org',
        reason: 'unsubscribe',
        ref_id: null,
      });
      await t.post('/v1/suppressions', { emails: ['bounced@example.org'], reason: 'hard_bounce' });
      expect((await t.post('/v1/email/subscribe', { email: 'BOUNCED@example.org' })).status).toBe(200);
      expect((await t.get('/v1/suppressions/bounced%40example.org')).status).toBe(404);
    });

    it('needs an API key', async () => {
      expect((await request(gw.app).get('/v1/suppressions')).status).toBe(401);
      expect((await request(gw.app).get('/v1/suppressions/a%40x.test')).status).toBe(401);
      expect(
        (
          await request(gw.app)
            .post('/v1/suppressions')
            .send({ emails: ['a@x.test'] })
        ).status,
      ).toBe(401);
      expect((await request(gw.app).delete('/v1/suppressions/a%40x.test')).status).toBe(401);
    });
  });
}
