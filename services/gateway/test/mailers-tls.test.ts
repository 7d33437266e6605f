import { type Server, createServer } from 'node:net';
import { deactivateMailer, loadSendingMailer } from '@mailyard/store';
import { type Dovecot, TEST_CA_CERT, TEST_CA_KEY, startDovecot } from '@mailyard/testkit/peers/dovecot';
import { type SmtpAuthServer, startSmtpAuthServer } from '@mailyard/testkit/peers/smtp-auth-server';
import { closedLoopbackAddress, listenOnLoopbackAlias } from '@mailyard/testkit/process';
import { ImapFlow } from 'imapflow';
import { useGateway } from './support/harness';

const ULID = '[0-9A-HJKMNP-TV-Z]{26}';
const USER = 'support@imap.test';
const PASS = 'Dove-c0t-Secret!';

/**
 * imapbasic/verify against a real Dovecot on port 993 of a loopback address of its own
 * (127.x.y.z, so it never waits for or collides with another test's Dovecot; implicit TLS with
 * a certificate from the test CA, trusted through NODE_EXTRA_CA_CERTS), and SMTP verify over
 * STARTTLS and implicit TLS.
 */
describe('mailer verification over TLS: Dovecot IMAPS, SMTP STARTTLS/SSL (servers)', () => {
  // Generous per-phase timeouts: a loaded machine must not turn a slow TLS handshake into a 422.
  // Only the silent server below reaches them.
  const TIMEOUT_MS = 10_000;
  const gw = useGateway('servers', {
    SMTP_VERIFY_TIMEOUT_MS: String(TIMEOUT_MS),
    IMAP_VERIFY_TIMEOUT_MS: String(TIMEOUT_MS),
  });
  let dovecot: Dovecot | null = null;
  let starttls: SmtpAuthServer;
  let implicit: SmtpAuthServer;

  beforeAll(async () => {
    dovecot = await startDovecot({ user: USER, pass: PASS, messages: 3 });
    starttls = await startSmtpAuthServer({
      user: 'u@smtp.test',
      pass: PASS,
      tls: 'starttls',
      cert: TEST_CA_CERT,
      key: TEST_CA_KEY,
    });
    implicit = await startSmtpAuthServer({
      user: 'u@smtp.test',
      pass: PASS,
      tls: 'implicit',
      cert: TEST_CA_CERT,
      key: TEST_CA_KEY,
    });
  });
  afterAll(async () => {
    await dovecot?.stop();
    await starttls?.stop();
    await implicit?.stop();
  });

  const imapBody = (config: object = {}, extra: object = {}) => ({
    name: 'Support',
    email: USER,
    config_type: 'imap',
    connection_type: 'basic',
    config: { host: dovecot!.host, port: 993, username: USER, password: PASS, secure: 'SSL', ...config },
    ...extra,
  });
  const { post } = gw;

  it('the Dovecot peer serves its user and seeded messages over IMAPS', async () => {
    const client = new ImapFlow({
      host: dovecot!.host,
      port: dovecot!.port,
      secure: true,
      auth: { user: USER, pass: PASS },
      logger: false,
    });
    await client.connect();
    const status = await client.status('INBOX', { messages: true });
    await client.logout();
    if (!status) throw new Error('no INBOX status');
    expect(status.messages).toBe(3);
  });

  it('imapbasic/verify: the right password creates a basic_imap_ mailer with its webhook', async () => {
    const res = await post(
      '/v1/imapbasic/verify',
      imapBody({}, { webhook: { url: 'https://hooks.example.com/in' } }),
    );
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      mailer_id: expect.stringMatching(new RegExp(`^basic_imap_${ULID}$`)),
      message: 'IMAP credentials verified; mailer created',
    });
    const got = await gw.get(`/v1/mailer/${res.body.mailer_id}`);
    expect(got.body.data).toMatchObject({
      config_type: 'basic_imap',
      connection_type: 'basic',
      state: 'active',
      config: { host: dovecot!.host, port: 993, username: USER, secure: 'SSL', password_set: true },
      webhook: { url: 'https://hooks.example.com/in', method: 'POST', headers_present: [] },
    });
    expect(JSON.stringify(got.body)).not.toContain(PASS);
  });

  it('imapbasic/verify: a wrong password is 422 with the server reason', async () => {
    const res = await post('/v1/imapbasic/verify', imapBody({ password: 'not-the-password' }));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      success: false,
      error: 'IMAP authentication failed',
      details: '[AUTHENTICATIONFAILED] Authentication failed.',
    });
    expect(JSON.stringify(res.body)).not.toContain('not-the-password');
  });

  it('imapbasic/verify: port 993 SSL only, and an unreachable server is a clear 422', async () => {
    const port143 = await post('/v1/imapbasic/verify', imapBody({ port: 143 }));
    expect(port143.status).toBe(400);
    expect(port143.body.error).toBe('Basic IMAP supports port 993 with SSL only');
    // A loopback address whose port 993 was just bound and released: the connection is refused.
    const closed = await closedLoopbackAddress(993);
    const refused = await post('/v1/imapbasic/verify', imapBody({ host: closed }));
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({
      success: false,
      error: 'Could not connect to the IMAP server',
      details: `${closed}:993: connect ECONNREFUSED ${closed}:993`,
    });
    // A host name that does not resolve is refused before connecting (guarded connect).
    const unknown = await post('/v1/imapbasic/verify', imapBody({ host: 'imap.mailyard.invalid' }));
    expect(unknown.status).toBe(422);
    expect(unknown.body).toEqual({
      success: false,
      error: 'Mailer host does not resolve',
      details: expect.stringMatching(/^imap\.mailyard\.invalid does not resolve: /),
    });
  });

  it('re-authentication of a deactivated IMAP mailer: enable and a password update verify against Dovecot', async () => {
    const id = (await post('/v1/imapbasic/verify', imapBody())).body.mailer_id;
    await deactivateMailer(gw.ctx.db, gw.tenantId, id, 'provider_auth_error', 'NO [AUTHENTICATIONFAILED]');
    expect((await post(`/v1/mailer/${id}/enable`, {})).body).toMatchObject({
      success: true,
      state: 'active',
    });
    const wrong = await gw.put('/v1/mailer/imap', { mailer_id: id, config: { password: 'bad' } });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error).toBe('IMAP authentication failed');
    const sending = await loadSendingMailer(gw.ctx.db, gw.ctx.sealer, gw.tenantId, id);
    expect(sending?.kind === 'smtp' && sending.smtp.password).toBe(PASS);
  });

  it('smtpbasic/verify over STARTTLS (Tls) and implicit TLS (SSL) with the trusted test certificate', async () => {
    const smtp = (port: number, secure: string) => ({
      name: 'Relay',
      email: 'u@smtp.test',
      config: { host: '127.0.0.1', port, username: 'u@smtp.test', password: PASS, secure },
    });
    expect((await post('/v1/smtpbasic/verify', smtp(starttls.port, 'Tls'))).status).toBe(201);
    expect((await post('/v1/smtpbasic/verify', smtp(starttls.port, 'Auto'))).status).toBe(201);
    expect((await post('/v1/smtpbasic/verify', smtp(implicit.port, 'SSL'))).status).toBe(201);
    // None never upgrades; this server refuses AUTH before STARTTLS.
    const none = await post('/v1/smtpbasic/verify', smtp(starttls.port, 'None'));
    expect(none.status).toBe(422);
    expect(none.body).toMatchObject({
      error: 'SMTP authentication failed',
      details: '538 Error: Must issue a STARTTLS command first',
    });
    // SSL against a STARTTLS port: TLS fails.
    const ssl = await post('/v1/smtpbasic/verify', smtp(starttls.port, 'SSL'));
    expect(ssl.status).toBe(422);
    expect(ssl.body.error).toBe('TLS with the SMTP server failed');
    expect(starttls.attempts.every((a) => a.username === 'u@smtp.test')).toBe(true);
  });

  it('a silent server on 993 is a timeout 422 within the bounded time', async () => {
    // Basic IMAP connects to port 993 only; the silent server takes 993 on a loopback address of
    // its own (127.x.y.z), so it never collides with Dovecot or another test process on 127.0.0.1.
    const silent: Server = createServer((s) => s.on('error', () => {}).resume());
    const host = await listenOnLoopbackAlias(silent, 993);
    try {
      const res = await post('/v1/imapbasic/verify', imapBody({ host }));
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        success: false,
        error: 'The IMAP server did not answer in time',
        details: `${host}:993 did not answer within ${TIMEOUT_MS} ms (CONNECT_TIMEOUT)`,
      });
    } finally {
      await new Promise((r) => silent.close(r));
    }
  });
});
