import { MODES } from '@mailyard/testkit/modes';
import request from 'supertest';
import { type Body, useSendSuite } from './support/send-suite';

/** POST /v1/email/send, templates at accept: subject and content come from the template unless the request overrides them. Run on embedded defaults and on the real servers. */
for (const mode of MODES) {
  describe(`send API (${mode})`, () => {
    const { gw, base, send, q } = useSendSuite(mode);

    describe('templates at accept', () => {
      let templateId: string;
      beforeAll(async () => {
        const res = await gw.post('/v1/email/template', {
          name: 'T',
          subject: 'Hello {{name}}',
          content: [{ type: 'text/html', value: '<p>Hi {{name}}</p>' }],
        });
        templateId = res.body.template_id;
      });
      const stored = async (refId: string) =>
        (
          await q<{ request: Body; subject: string }>(
            'SELECT s.request, l.subject FROM sends s JOIN email_logs l ON l.ref_id = s.ref_id WHERE s.ref_id = $1',
            [refId],
          )
        )[0]!;

      it('takes subject and content from the template when the request has none', async () => {
        const { subject: _s, content: _c, ...b } = base();
        const res = await send({ ...b, template_id: templateId });
        expect(res.status).toBe(200);
        const row = await stored(res.body.ref_id);
        expect(row.request).toMatchObject({
          template_id: templateId,
          subject: 'Hello {{name}}',
          content: [{ type: 'text/html', value: '<p>Hi {{name}}</p>' }],
        });
        expect(row.subject).toBe('Hello {{name}}');
      });

      it('lets the request override subject and content separately', async () => {
        const { content: _c, ...b } = base();
        const res = await send({ ...b, subject: 'Override', template_id: templateId });
        expect(res.status).toBe(200);
        expect((await stored(res.body.ref_id)).request).toMatchObject({
          subject: 'Override',
          content: [{ type: 'text/html', value: '<p>Hi {{name}}</p>' }],
        });
        const { subject: _s, ...b2 } = base();
        const res2 = await send({ ...b2, template_id: templateId });
        expect((await stored(res2.body.ref_id)).request).toMatchObject({
          subject: 'Hello {{name}}',
          content: [{ type: 'text/plain', value: 'Hi there' }],
        });
      });

      it('requires subject and content when no template supplies them', async () => {
        const { subject: _s, ...noSubject } = base();
        expect((await send(noSubject)).body).toEqual({ success: false, error: 'subject is required' });
        const { content: _c, ...noContent } = base();
        const res = await send(noContent);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ success: false, error: 'content is required' });
      });

      it("404s an unknown template and another tenant's template", async () => {
        const unknown = await send({ ...base(), template_id: 'template_01HZZZZZZZZZZZZZZZZZZZZZZZ' });
        expect(unknown.status).toBe(404);
        expect(unknown.body).toEqual({ success: false, error: 'Template not found' });
        const theirs = await gw.post(
          '/v1/email/template',
          { name: 'X', subject: 'S', content: [{ type: 'text/plain', value: 'v' }] },
          gw.otherKey,
        );
        const res = await send({ ...base(), template_id: theirs.body.template_id });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ success: false, error: 'Template not found' });
      });
    });
  });
}
