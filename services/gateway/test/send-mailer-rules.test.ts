import { MODES } from '@mailyard/testkit/modes';
import request from 'supertest';
import { type Body, useSendSuite } from './support/send-suite';

/** POST /v1/email/send, mailer rules: which mailers may send, and from which addresses. Run on embedded defaults and on the real servers. */
for (const mode of MODES) {
  describe(`send API (${mode})`, () => {
    const { gw, m, base, send, q } = useSendSuite(mode);

    describe('mailer rules', () => {
      const cases: Array<[string, () => Body, number, string]> = [
        [
          'unknown mailer',
          () => ({ ...base(), mailer_id: 'domain_01HZZZZZZZZZZZZZZZZZZZZZZZ' }),
          404,
          'Mailer not found',
        ],
        ["another tenant's mailer", () => ({ ...base(), mailer_id: m.other! }), 404, 'Mailer not found'],
        [
          'deleted domain mailer',
          () => ({ ...base(), from: { email: 'a@gone.test' }, mailer_id: m.deletedDomain! }),
          404,
          'Mailer not found',
        ],
        ['deleted SMTP mailer', () => ({ ...base(), mailer_id: m.deletedSmtp! }), 404, 'Mailer not found'],
        [
          'unverified sending domain',
          () => ({ ...base(), from: { email: 'a@unverified.test' }, mailer_id: m.unverified! }),
          422,
          'Sending domain is not verified',
        ],
        [
          'disabled mailer',
          () => ({ ...base(), from: { email: 'a@disabled.test' }, mailer_id: m.disabled! }),
          422,
          'Mailer is disabled',
        ],
        [
          'deactivated mailer',
          () => ({ ...base(), mailer_id: m.deactivated! }),
          422,
          'Mailer is deactivated',
        ],
        [
          'receive-only IMAP mailer',
          () => ({ ...base(), mailer_id: m.imap! }),
          422,
          'Mailer cannot send email',
        ],
        [
          'from outside the domain',
          () => ({ ...base(), from: { email: 'a@other.test' } }),
          422,
          'from.email must be an address of the sending domain',
        ],
        [
          'from on a look-alike domain',
          () => ({ ...base(), from: { email: 'a@notexample.com' } }),
          422,
          'from.email must be an address of the sending domain',
        ],
        [
          'from on a domain that merely starts with it',
          () => ({ ...base(), from: { email: 'a@example.com.evil.test' } }),
          422,
          'from.email must be an address of the sending domain',
        ],
      ];
      it.each(cases)('%s', async (_name, body, status, message) => {
        const res = await send(body());
        expect(res.status).toBe(status);
        expect(res.body).toMatchObject({ success: false, error: message });
      });

      it('names the expected domain in details', async () => {
        const res = await send({ ...base(), from: { email: 'a@other.test' } });
        expect(res.body.details).toBe('from.email must be @example.com or @<subdomain>.example.com');
      });

      it('accepts subdomains of the sending domain, any case, and IDN domains', async () => {
        expect((await send({ ...base(), from: { email: 'news@mail.Example.COM' } })).status).toBe(200);
        const idn = await send({ ...base(), from: { email: 'info@Müller.example' }, mailer_id: m.idn });
        expect(idn.status).toBe(200);
        const [row] = await q<{ request: { from: { email: string } } }>(
          'SELECT request FROM sends WHERE ref_id = $1',
          [idn.body.ref_id],
        );
        expect(row!.request.from.email).toBe('info@xn--mller-kva.example');
      });

      it('lets SMTP mailers send from any address', async () => {
        expect(
          (await send({ ...base(), from: { email: 'me@anywhere.test' }, mailer_id: m.smtp })).status,
        ).toBe(200);
      });

      it('writes nothing for a refused send', async () => {
        const before = await q<{ n: number }>('SELECT count(*)::int AS n FROM sends WHERE tenant_id = $1', [
          gw.tenantId,
        ]);
        await send({ ...base(), mailer_id: m.unverified });
        const after = await q<{ n: number }>('SELECT count(*)::int AS n FROM sends WHERE tenant_id = $1', [
          gw.tenantId,
        ]);
        expect(after[0]!.n).toBe(before[0]!.n);
      });
    });
  });
}
