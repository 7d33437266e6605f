import { execFile } from 'node:child_process';
import { createPublicKey, createSign, createVerify } from 'node:crypto';
import { promisify } from 'node:util';
import { loadMailerWebhook, loadSendingMailer } from '@mailyard/store';
import { startGateway, useGateway } from './support/harness';

const run = promisify(execFile);
const SMTP_PASSWORD = 'plaintext-SMTP-p4ssw0rd-canary';
const IMAP_PASSWORD = 'plaintext-IMAP-p4ssw0rd-canary';
const HOOK_SECRET = 'plaintext-webhook-header-canary';

/** Secrets at rest (docs/architecture.md, security 2): sealed with SECRET_KEY, readable only through the sealer. */
describe('sealed secrets at rest (servers)', () => {
  const gw = useGateway('servers');
  let smtpId: string;
  let imapId: string;
  let domain: { mailer_id: string; records: Array<{ purpose: string; value: string }> };

  beforeAll(async () => {
    const { post } = gw;
    smtpId = (
      await post('/v1/mailer/smtp', {
        name: 'S',
        email: 's@example.com',
        config: { host: '192.0.2.1', port: 587, username: 's@example.com', password: SMTP_PASSWORD },
      })
    ).body.mailer_id;
    imapId = (
      await post('/v1/mailer/imap', {
        name: 'I',
        email: 'i@example.com',
        config: { host: '192.0.2.2', username: 'i@example.com', password: IMAP_PASSWORD },
        webhook: { url: 'https://hooks.example.com/in', headers: { 'X-Secret': HOOK_SECRET } },
      })
    ).body.mailer_id;
    domain = (await post('/v1/domain/add', { domain: 'sealed.example.com' })).body.data;
  });

  it('round-trips every secret through the sealer', async () => {
    const smtp = await loadSendingMailer(gw.ctx.db, gw.ctx.sealer, gw.tenantId, smtpId);
    expect(smtp?.kind === 'smtp' && smtp.smtp.password).toBe(SMTP_PASSWORD);
    const imap = await loadSendingMailer(gw.ctx.db, gw.ctx.sealer, gw.tenantId, imapId);
    expect(imap?.kind === 'smtp' && imap.smtp.password).toBe(IMAP_PASSWORD);
    expect((await loadMailerWebhook(gw.ctx.db, gw.ctx.sealer, gw.tenantId, imapId))?.headers).toEqual({
      'X-Secret': HOOK_SECRET,
    });

    // The unsealed DKIM private key signs what the published public key verifies.
    const sending = await loadSendingMailer(gw.ctx.db, gw.ctx.sealer, gw.tenantId, domain.mailer_id);
    if (sending?.kind !== 'domain') throw new Error('expected a domain mailer');
    const p = domain.records.find((r) => r.purpose === 'dkim')!.value.split('p=')[1]!;
    const signature = createSign('RSA-SHA256').update('dkim body').sign(sending.dkimPrivateKeyPem);
    const publicKey = createPublicKey({ key: Buffer.from(p, 'base64'), format: 'der', type: 'spki' });
    expect(createVerify('RSA-SHA256').update('dkim body').verify(publicKey, signature)).toBe(true);
  });

  it('a dump of the database holds no plaintext password, header secret or private key', async () => {
    const sending = await loadSendingMailer(gw.ctx.db, gw.ctx.sealer, gw.tenantId, domain.mailer_id);
    if (sending?.kind !== 'domain') throw new Error('expected a domain mailer');
    const keyBody = sending.dkimPrivateKeyPem.split('\n').filter((l) => l && !l.startsWith('-----'));
    const dumpArgs = ['--no-owner', '--data-only', gw.stores.env.DATABASE_URL!];
    const { stdout: dump } = await run('pg_dump', dumpArgs, { maxBuffer: 64 * 1024 * 1024 });
    expect(dump).toContain('sealed.example.com'); // the dump really holds our rows
    expect(dump).toContain(smtpId);
    for (const secret of [SMTP_PASSWORD, IMAP_PASSWORD, HOOK_SECRET, 'PRIVATE KEY', ...keyBody])
      expect(dump).not.toContain(secret);
    // Nor in hex (bytea) or base64 form.
    for (const secret of [SMTP_PASSWORD, IMAP_PASSWORD, HOOK_SECRET]) {
      expect(dump).not.toContain(Buffer.from(secret).toString('hex'));
      expect(dump).not.toContain(Buffer.from(secret).toString('base64'));
    }
    expect(dump).not.toContain(Buffer.from(keyBody[1]!, 'base64').toString('hex'));
  });

  it('a different SECRET_KEY is detected at startup and reported', async () => {
    await expect(startGateway(gw.stores, { SECRET_KEY: 'ab'.repeat(32) })).rejects.toThrow(
      'Invalid configuration: SECRET_KEY does not match the key the stored secrets were sealed with',
    );
  });
});
