import { useGateway } from './support/harness';

describe('mailer hosts on private networks (SSRF guard, embedded)', () => {
  const gw = useGateway('embedded', { MAILER_ALLOW_PRIVATE_HOSTS: '0' });
  const smtp = (host: string) => ({
    name: 'Internal',
    email: 'ops@example.com',
    config_type: 'smtp',
    connection_type: 'basic',
    config: { host, port: 587, username: 'u', password: 'p', secure: 'Auto' },
  });

  it.each(['127.0.0.1', 'localhost', '10.0.0.5', '169.254.169.254', '[::1]'])(
    'refuses an SMTP mailer at %s with 422',
    async (host) => {
      const res = await gw.post('/v1/mailer/smtp', smtp(host.replace(/^\[|\]$/g, '')));
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        success: false,
        error: 'Mailer host is not allowed',
        details: expect.stringContaining('resolves to a private, loopback or link-local address'),
      });
    },
  );

  it('refuses verify and IMAP mailers too, before connecting', async () => {
    const verify = await gw.post('/v1/smtpbasic/verify', { ...smtp('127.0.0.1'), config_type: 'smtp' });
    expect(verify.status).toBe(422);
    expect(verify.body.error).toBe('Mailer host is not allowed');
    const imap = await gw.post('/v1/imapbasic/verify', {
      name: 'Box',
      email: 'box@example.com',
      config_type: 'imap',
      connection_type: 'basic',
      config: { host: '192.168.1.10', port: 993, username: 'u', password: 'p', secure: 'SSL' },
    });
    expect(imap.status).toBe(422);
    expect(imap.body.error).toBe('Mailer host is not allowed');
  });

  it('refuses moving an existing mailer onto a private host', async () => {
    const created = await gw.post('/v1/mailer/smtp', smtp('8.8.8.8'));
    expect(created.status).toBe(201);
    const moved = await gw.put('/v1/mailer/smtp', {
      mailer_id: created.body.mailer_id,
      config: { host: '127.0.0.1' },
    });
    expect(moved.status).toBe(422);
    expect(moved.body.error).toBe('Mailer host is not allowed');
  });
});
