/**
 * SSRF guard of the mailer API (docs/architecture.md, security 3 and 7), with a real dnsmasq as
 * DNS_SERVERS and a real SMTP receiver on loopback counting TCP connections:
 * - hosts that are, or resolve to, loopback/private/link-local/metadata addresses, and names that
 *   do not resolve, are refused with 422 at create, verify, update and enable, before anything
 *   connects, and `details` names the host but never the address;
 * - a change of host, port, username or secure without the password is a 400;
 * - with MAILER_ALLOW_PRIVATE_HOSTS=1 a name is resolved through DNS_SERVERS and the verify
 *   connects to the address it resolved to.
 */
import { type Dnsmasq, startDnsmasq } from '@mailyard/testkit/peers/dnsmasq';
import { type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { useGateway } from './support/harness';

jest.setTimeout(60_000);

const PASS = 'Sm7p-pa55word-XYZ';
const ADDRESSES = ['127.0.0.1', '10.0.0.5', '169.254.169.254', '100.64.1.1', '93.184.216.34', '::1'];
const NOT_ALLOWED = 'Mailer host is not allowed';
const UNRESOLVED = 'Mailer host does not resolve';
const PASSWORD_AGAIN =
  'config.password is required when host, port, username or secure changes: the stored password is not sent to a new destination';

let dns: Dnsmasq;
let r: SmtpReceiver;
const records = (rebindTo: string) => ({
  a: [
    { name: 'loop.test', ip: '127.0.0.1' },
    { name: 'ten.test', ip: '10.0.0.5' },
    { name: 'meta.test', ip: '169.254.169.254' },
    { name: 'cgnat.test', ip: '100.64.1.1' },
    { name: 'mixed.test', ip: '93.184.216.34,::1' },
    { name: 'public.test', ip: '93.184.216.34' },
    { name: 'rebind.test', ip: rebindTo },
  ],
});
// Filled before the suites' gateways start (useGateway reads env in its beforeAll).
const refusing: Record<string, string> = { MAILER_ALLOW_PRIVATE_HOSTS: '0' };
const allowing: Record<string, string> = { MAILER_ALLOW_PRIVATE_HOSTS: '1' };

beforeAll(async () => {
  dns = await startDnsmasq(records('93.184.216.34'));
  r = await startSmtpReceiver({ auth: { user: 'u@smtp.test', pass: PASS } });
  for (const env of [refusing, allowing])
    Object.assign(env, { DNS_SERVERS: dns.server, DNS_TIMEOUT_MS: '1000' });
});
afterAll(async () => {
  await r?.close();
  await dns?.stop();
});

const smtp = (host: string, config: object = {}) => ({
  name: 'Internal',
  email: 'ops@example.com',
  config_type: 'smtp',
  connection_type: 'basic',
  config: { host, port: r.port, username: 'u@smtp.test', password: PASS, secure: 'None', ...config },
});
const imap = (host: string) => ({
  name: 'Box',
  email: 'box@example.com',
  config_type: 'imap',
  connection_type: 'basic',
  config: { host, port: 993, username: 'u', password: 'p', secure: 'SSL' },
});

/** A 422 refusal naming the host (as given) and none of the addresses. */
function expectRefused(res: { status: number; body: Record<string, unknown> }, error: string, host: string) {
  expect(res.status).toBe(422);
  expect(res.body).toEqual({ success: false, error, details: expect.stringContaining(host) });
  for (const address of ADDRESSES)
    if (!host.includes(address)) expect(String(res.body.details)).not.toContain(address);
}

describe('mailer hosts refused (MAILER_ALLOW_PRIVATE_HOSTS=0)', () => {
  const gw = useGateway('embedded', refusing);

  it.each([
    ['127.0.0.1', NOT_ALLOWED],
    ['127.0.0.1.', NOT_ALLOWED],
    ['localhost', NOT_ALLOWED],
    ['localhost.', NOT_ALLOWED],
    ['[::1]', NOT_ALLOWED],
    ['::ffff:127.0.0.1', NOT_ALLOWED],
    ['10.0.0.5', NOT_ALLOWED],
    ['169.254.169.254', NOT_ALLOWED],
    ['loop.test', NOT_ALLOWED],
    ['ten.test', NOT_ALLOWED],
    ['meta.test', NOT_ALLOWED],
    ['cgnat.test', NOT_ALLOWED],
    ['mixed.test', NOT_ALLOWED],
    ['metadata.google.internal', UNRESOLVED],
    ['no-such-host.test', UNRESOLVED],
  ])('refuses an SMTP mailer at %s with 422 "%s"', async (host, error) => {
    expectRefused(await gw.post('/v1/mailer/smtp', smtp(host)), error, host);
  });

  it('refuses verify (SMTP and IMAP) before opening any connection', async () => {
    expectRefused(await gw.post('/v1/smtpbasic/verify', smtp('loop.test')), NOT_ALLOWED, 'loop.test');
    expectRefused(await gw.post('/v1/smtpbasic/verify', smtp('127.0.0.1')), NOT_ALLOWED, '127.0.0.1');
    expectRefused(await gw.post('/v1/imapbasic/verify', imap('ten.test')), NOT_ALLOWED, 'ten.test');
    expectRefused(await gw.post('/v1/mailer/imap', imap('meta.test')), NOT_ALLOWED, 'meta.test');
    expectRefused(await gw.post('/v1/imapbasic/verify', imap('nothing.test')), UNRESOLVED, 'nothing.test');
    expect(r.connections()).toBe(0);
  });

  it('refuses moving an existing mailer onto a private host', async () => {
    const created = await gw.post('/v1/mailer/smtp', smtp('public.test'));
    expect(created.status).toBe(201);
    const moved = await gw.put('/v1/mailer/smtp', {
      mailer_id: created.body.mailer_id,
      config: { host: 'loop.test', password: PASS },
    });
    expectRefused(moved, NOT_ALLOWED, 'loop.test');
    expect((await gw.get(`/v1/mailer/${created.body.mailer_id}`)).body.data.config.host).toBe('public.test');
  });

  it('checks again on enable: a name that now resolves inward is refused (rebinding since save)', async () => {
    const created = await gw.post('/v1/mailer/smtp', smtp('rebind.test'));
    expect(created.status).toBe(201);
    const id = created.body.mailer_id;
    expect((await gw.post(`/v1/mailer/${id}/disable`, {})).status).toBe(200);
    await dns.setRecords(records('127.0.0.1'));
    try {
      expectRefused(await gw.post(`/v1/mailer/${id}/enable`, {}), NOT_ALLOWED, 'rebind.test');
      expect((await gw.get(`/v1/mailer/${id}`)).body.data.state).toBe('disabled');
    } finally {
      await dns.setRecords(records('93.184.216.34'));
    }
    expect(r.connections()).toBe(0);
  });
});

describe('a new destination needs the password again', () => {
  const gw = useGateway('embedded', allowing);

  it.each([
    [{ host: 'public.test' }],
    [{ host: 'LOCALHOST' }],
    [{ port: 2525 }],
    [{ username: 'someone-else@smtp.test' }],
    [{ secure: 'Tls' }],
  ])('PUT /v1/mailer/smtp with config %j and no password is 400', async (change) => {
    const id = (await gw.post('/v1/mailer/smtp', smtp('127.0.0.1'))).body.mailer_id;
    const res = await gw.put('/v1/mailer/smtp', { mailer_id: id, config: change });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: PASSWORD_AGAIN });
    expect((await gw.get(`/v1/mailer/${id}`)).body.data.config).toMatchObject({
      host: '127.0.0.1',
      port: r.port,
      username: 'u@smtp.test',
      secure: 'None',
    });
  });

  it('PUT /v1/mailer/imap with a new host and no password is 400', async () => {
    const id = (await gw.post('/v1/mailer/imap', imap('127.0.0.1'))).body.mailer_id;
    const res = await gw.put('/v1/mailer/imap', { mailer_id: id, config: { host: 'public.test' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(PASSWORD_AGAIN);
    const user = await gw.put('/v1/mailer/imap', { mailer_id: id, config: { username: 'other' } });
    expect(user.status).toBe(400);
  });

  it('a basic_smtp mailer moved to another host never logs in there with the stored password', async () => {
    const created = await gw.post('/v1/smtpbasic/verify', smtp('127.0.0.1'));
    expect(created.status).toBe(201);
    const logins = r.authAttempts();
    const connections = r.connections();
    const res = await gw.put('/v1/mailer/smtp', {
      mailer_id: created.body.mailer_id,
      config: { host: 'loop.test' },
    });
    expect(res.status).toBe(400);
    expect(r.authAttempts()).toBe(logins);
    expect(r.connections()).toBe(connections);
  });

  it('the same destination, a new password with it, or other fields need no password', async () => {
    const id = (await gw.post('/v1/mailer/smtp', smtp('127.0.0.1'))).body.mailer_id;
    const same = await gw.put('/v1/mailer/smtp', {
      mailer_id: id,
      name: 'Renamed',
      config: { host: '127.0.0.1', port: r.port, username: 'u@smtp.test', secure: 'None' },
    });
    expect(same.status).toBe(200);
    const moved = await gw.put('/v1/mailer/smtp', {
      mailer_id: id,
      config: { host: 'loop.test', password: PASS },
    });
    expect(moved.status).toBe(200);
    expect((await gw.get(`/v1/mailer/${id}`)).body.data.config.host).toBe('loop.test');
  });
});

describe('MAILER_ALLOW_PRIVATE_HOSTS=1', () => {
  const gw = useGateway('embedded', allowing);

  it('resolves the host through DNS_SERVERS and verifies against the address it resolved to', async () => {
    const before = r.connections();
    const logins = r.authAttempts();
    // loop.test exists only in dnsmasq: the system resolver would not find it
    const res = await gw.post('/v1/smtpbasic/verify', smtp('loop.test'));
    expect(res.status).toBe(201);
    expect(r.connections()).toBe(before + 1);
    expect(r.authAttempts()).toBe(logins + 1);
  });

  it('still refuses a name that does not resolve', async () => {
    expectRefused(await gw.post('/v1/mailer/smtp', smtp('nothing.test')), UNRESOLVED, 'nothing.test');
  });

  it('reports a refused connection by host and port, without the address', async () => {
    const res = await gw.post('/v1/smtpbasic/verify', smtp('loop.test', { port: 9 }));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      success: false,
      error: 'Could not connect to the SMTP server',
      details: 'Could not connect to loop.test:9 (ECONNREFUSED)',
    });
  });
});
