import { MODES } from '@mailyard/testkit/modes';
import request from 'supertest';
import { useSendSuite } from './support/send-suite';

/** POST /v1/email/send, recipient and size limits: at most 1000 recipients per send and 30 MB per message, templates included. Run on embedded defaults and on the real servers. */
for (const mode of MODES) {
  describe(`send API (${mode})`, () => {
    const { gw, base, send, q, counts } = useSendSuite(mode);

    describe('recipient and size limits', () => {
      // The two 30 MB tests each push ~40 MB of JSON through the gateway (parse, base64-decode,
      // one row written) twice or once: CPU-bound, 65-127 s each measured at load average 20-26 on
      // 2 cores, against jest's 60 s default (they timed out in a stress loop; the work is real).
      const BIG_BODY_MS = 300_000;
      const many = (n: number, domain = 'many.test') =>
        Array.from({ length: n }, (_, i) => ({ email: `r${i}@${domain}` }));

      it('accepts 1000 recipients and refuses 1001 (to + cc + bcc)', async () => {
        const ok = await send({ ...base(), to: many(998), cc: many(1, 'cc.test'), bcc: many(1, 'bcc.test') });
        expect(ok.status).toBe(200);
        expect((await counts(ok.body.ref_id)).logs).toBe(1000);
        const over = await send({
          ...base(),
          to: many(999),
          cc: many(1, 'cc.test'),
          bcc: many(1, 'bcc.test'),
        });
        expect(over.status).toBe(400);
        expect(over.body).toEqual({
          success: false,
          error: 'total recipients must be at most 1000',
          details: '1001 recipients (to + cc + bcc)',
        });
      });

      it('counts cc and bcc once per copy with substitutions', async () => {
        const subs = { 'r0@many.test': { name: 'R0' } };
        const ok = await send({ ...base(), to: many(500), bcc: many(1, 'bcc.test'), substitutions: subs });
        expect(ok.status).toBe(200);
        // 500 copies, 100 per send.email command (COPIES_PER_COMMAND).
        expect(await counts(ok.body.ref_id)).toEqual({ sends: 1, logs: 1000, outbox: 5 });
        const over = await send({ ...base(), to: many(501), bcc: many(1, 'bcc.test'), substitutions: subs });
        expect(over.status).toBe(400);
        expect(over.body.error).toBe('total recipients must be at most 1000');
        expect(over.body.details).toBe(
          '1002 recipients (with substitutions every copy counts its to, cc and bcc recipients)',
        );
      });

      it(
        'accepts exactly 30 MB and refuses more (decoded attachments + bodies) with 413, at the default body limit',
        async () => {
          const mb = 1024 * 1024;
          const atLimit = {
            ...base(),
            content: [
              { type: 'text/plain', value: 'x'.repeat(mb / 2) },
              { type: 'text/html', value: 'é'.repeat(mb / 4) },
            ],
            attachments: [
              { filename: 'a.bin', content: Buffer.alloc(20 * mb, 7).toString('base64') },
              {
                filename: 'b.bin',
                content: Buffer.alloc(9 * mb, 8).toString('base64'),
                disposition: 'inline',
                content_id: 'b',
              },
            ],
          };
          const ok = await send(atLimit);
          expect(ok.status).toBe(200);
          const [row] = await q<{ n: number }>(
            "SELECT length(request->'attachments'->0->>'content')::int AS n FROM sends WHERE ref_id = $1",
            [ok.body.ref_id],
          );
          expect(row!.n).toBe(Math.ceil((20 * mb) / 3) * 4);
          const over = {
            ...atLimit,
            content: [...atLimit.content.slice(0, 1), { type: 'text/html', value: `${'é'.repeat(mb / 4)}!` }],
          };
          const res = await send(over);
          expect(res.status).toBe(413);
          expect(res.body).toEqual({ success: false, error: 'message size must be at most 30 MB' });
        },
        BIG_BODY_MS,
      );

      it(
        'counts template bodies towards the 30 MB',
        async () => {
          const mb = 1024 * 1024;
          // Template bodies are limited by the 1 MB default body limit (HTTP_BODY_LIMIT).
          const templateBytes = mb - 4096;
          const t = await gw.post('/v1/email/template', {
            name: 'big',
            subject: 'S',
            content: [{ type: 'text/plain', value: 'x'.repeat(templateBytes) }],
          });
          expect(t.status).toBe(201);
          const { content: _c, ...b } = base();
          const body = {
            ...b,
            template_id: t.body.template_id,
            attachments: [
              { filename: 'a', content: Buffer.alloc(30 * mb - templateBytes + 1).toString('base64') },
            ],
          };
          const res = await send(body);
          expect(res.status).toBe(413);
          expect(res.body).toEqual({ success: false, error: 'message size must be at most 30 MB' });
        },
        BIG_BODY_MS,
      );
    });
  });
}
