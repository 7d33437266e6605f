import { MODES } from '@mailyard/testkit/modes';
import request from 'supertest';
import { useGateway } from './support/harness';

const html = [{ type: 'text/html', value: '<p>Hi {{name}}</p>' }];

/** The templates API suite; run once on embedded defaults and once on the real servers. */
for (const mode of MODES) {
  describe(`templates API (${mode})`, () => {
    const gw = useGateway(mode);

    const create = (body: unknown, k = gw.key) => gw.post('/v1/email/template', body as object, k);

    it('creates and reads a template with the exact shapes', async () => {
      const res = await create({ name: 'Welcome', subject: 'Hello {{name}}', content: html });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        success: true,
        template_id: expect.stringMatching(/^template_[0-9A-HJKMNP-TV-Z]{26}$/),
      });
      const got = await gw.get(`/v1/email/template/${res.body.template_id}`);
      expect(got.status).toBe(200);
      expect(got.body).toEqual({
        success: true,
        template: { name: 'Welcome', subject: 'Hello {{name}}', content: html },
      });
    });

    it.each([
      [{ subject: 's', content: html }, 'name is required'],
      [{ name: '  ', subject: 's', content: html }, 'name is required'],
      [{ name: 'n', content: html }, 'subject is required'],
      [{ name: 'n', subject: 's' }, 'content is required'],
      [{ name: 'n', subject: 's', content: [] }, 'content is required'],
      [
        { name: 'n', subject: 's', content: [{ type: 'application/pdf', value: 'x' }] },
        'content type must be text/html or text/plain',
      ],
      [
        { name: 'n', subject: 'Hi\r\nBcc: x@example.com', content: html },
        'subject must not contain line breaks or other control characters',
      ],
      [{ name: 'n', subject: 's', content: [{ type: 'text/plain' }] }, 'content value is required'],
    ])('rejects %j with "%s"', async (body, message) => {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, error: message });
    });

    it('updates only the fields given', async () => {
      const id = (await create({ name: 'A', subject: 'S', content: html })).body.template_id;
      const res = await gw.put('/v1/email/template', { template_id: id, subject: 'New' });
      expect(res.body).toEqual({ success: true, template_id: id });
      const got = await gw.get(`/v1/email/template/${id}`);
      expect(got.body.template).toEqual({ name: 'A', subject: 'New', content: html });
      const plain = [{ type: 'text/plain', value: 'p' }];
      await gw.put('/v1/email/template', { template_id: id, content: plain, name: 'B' });
      const again = await gw.get(`/v1/email/template/${id}`);
      expect(again.body.template).toEqual({ name: 'B', subject: 'New', content: plain });
    });

    it('requires template_id on update and 404s unknown ids', async () => {
      const missing = await gw.put('/v1/email/template', { name: 'x' });
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ success: false, error: 'Template ID is required' });
      const unknown = await gw.put('/v1/email/template', { template_id: 'template_nope', name: 'x' });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ success: false, error: 'Template not found' });
    });

    it('deletes permanently', async () => {
      const id = (await create({ name: 'D', subject: 'S', content: html })).body.template_id;
      const del = await gw.delete(`/v1/email/template/${id}`);
      expect(del.status).toBe(200);
      expect(del.body).toEqual({ success: true });
      expect((await gw.get(`/v1/email/template/${id}`)).status).toBe(404);
      expect((await gw.delete(`/v1/email/template/${id}`)).body).toEqual({
        success: false,
        error: 'Template not found',
      });
    });

    it("reads another tenant's template as 404 everywhere", async () => {
      const id = (await create({ name: 'Mine', subject: 'S', content: html })).body.template_id;
      expect((await gw.get(`/v1/email/template/${id}`, gw.otherKey)).status).toBe(404);
      expect((await gw.put('/v1/email/template', { template_id: id, name: 'x' }, gw.otherKey)).status).toBe(
        404,
      );
      expect((await gw.delete(`/v1/email/template/${id}`, gw.otherKey)).status).toBe(404);
      const list = await gw.get('/v1/email/templates?pageSize=50', gw.otherKey);
      expect(list.body.templates.map((t: { id: string }) => t.id)).not.toContain(id);
      expect((await gw.get(`/v1/email/template/${id}`)).body.template.name).toBe('Mine');
    });

    it('paginates with a stable cursor: no duplicates or gaps while rows are added', async () => {
      const tenant = await gw.newTenant();
      const k = tenant.apiKey;
      const created: string[] = [];
      for (let i = 0; i < 7; i++)
        created.push((await create({ name: `T${i}`, subject: 'S', content: html }, k)).body.template_id);

      const seen: string[] = [];
      let token: string | null = null;
      let pages = 0;
      do {
        const url: string = `/v1/email/templates?pageSize=3${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`;
        const res = await gw.get(url, k);
        expect(res.status).toBe(200);
        expect(Object.keys(res.body).sort()).toEqual(['next_page_token', 'success', 'templates']);
        seen.push(...res.body.templates.map((t: { id: string; name: string }) => t.id));
        for (const t of res.body.templates) expect(Object.keys(t).sort()).toEqual(['id', 'name']);
        token = res.body.next_page_token;
        if (pages === 0)
          created.push((await create({ name: 'late', subject: 'S', content: html }, k)).body.template_id);
        pages++;
      } while (token);
      expect(seen).toEqual(created);
      expect(new Set(seen).size).toBe(seen.length);
    });

    it('defaults pageSize to 20, caps it at 50 and returns null on the last page', async () => {
      const k = (await gw.newTenant()).apiKey;
      for (let i = 0; i < 21; i++) await create({ name: `P${i}`, subject: 'S', content: html }, k);
      const first = await gw.get('/v1/email/templates', k);
      expect(first.body.templates).toHaveLength(20);
      expect(typeof first.body.next_page_token).toBe('string');
      const rest = await gw.get(`/v1/email/templates?pageToken=${first.body.next_page_token}`, k);
      expect(rest.body.templates).toHaveLength(1);
      expect(rest.body.next_page_token).toBeNull();
      expect((await gw.get('/v1/email/templates?pageSize=51', k)).status).toBe(400);
      expect((await gw.get('/v1/email/templates?pageSize=0', k)).status).toBe(400);
      const bad = await gw.get('/v1/email/templates?pageToken=garbage', k);
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ success: false, error: 'Invalid pageToken' });
    });

    it('accepts X-API-Key as well as Bearer, and 401s without a valid key', async () => {
      expect((await request(gw.app).get('/v1/email/templates').set('X-API-Key', gw.key)).status).toBe(200);
      const none = await request(gw.app).get('/v1/email/templates');
      expect(none.status).toBe(401);
      expect(none.body).toEqual({ success: false, error: 'Invalid or missing API key' });
      expect((await gw.get('/v1/email/templates', 'myk_wrong')).status).toBe(401);
      expect(
        (await request(gw.app).get('/v1/email/templates').set('Authorization', `Basic ${gw.key}`)).status,
      ).toBe(401);
    });

    it('answers malformed JSON with a 400 envelope and unknown routes with 404', async () => {
      const bad = await gw
        .post('/v1/email/template')
        .set('Content-Type', 'application/json')
        .send('{"name": ');
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ success: false, error: 'Malformed JSON body' });
      const missing = await gw.get('/v1/nope');
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ success: false, error: 'Not found' });
    });
  });
}
