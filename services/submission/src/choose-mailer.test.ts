import { chooseMailer } from './choose-mailer';

test('header first, then the sender address, then the verified domain, else 550 5.7.1', () => {
  const both = { byAddress: 'm_addr', byDomain: 'd_dom' };
  expect(chooseMailer('m_hdr', 'a@x.example', both)).toEqual({ ok: true, mailerId: 'm_hdr' });
  expect(chooseMailer(null, 'a@x.example', both)).toEqual({ ok: true, mailerId: 'm_addr' });
  expect(chooseMailer(null, 'a@x.example', { byAddress: null, byDomain: 'd_dom' })).toEqual({
    ok: true,
    mailerId: 'd_dom',
  });
  expect(chooseMailer(null, 'a@x.example', { byAddress: null, byDomain: null })).toMatchObject({
    ok: false,
    code: 550,
    message: expect.stringMatching(/^5\.7\.1 /),
  });
});
