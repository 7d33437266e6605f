import { generateKeyPairSync } from 'node:crypto';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { dkimSign } from '../dkim';
import { buildMessage, serviceMessageId } from './index';

const from = { email: 'news@example.org', name: 'Example News' };

async function build(headers?: Record<string, string>) {
  return buildMessage({
    request: {
      from,
      replyTo: 'support@example.org',
      headers,
      attachments: [
        {
          filename: 'a.txt',
          content: Buffer.from('hello attachment').toString('base64'),
          type: 'text/plain',
          disposition: 'attachment',
        },
        {
          filename: 'logo.png',
          content: Buffer.from('PNGDATA').toString('base64'),
          type: 'image/png',
          disposition: 'inline',
          content_id: 'logo1',
        },
      ],
    },
    recipients: [
      { email: 'ann@example.com', name: 'Ann', type: 'to' },
      { email: 'cc@example.com', type: 'cc' },
      { email: 'hidden@example.com', type: 'bcc' },
    ],
    rendered: { subject: 'Héllo', html: '<p>Hi <img src="cid:logo1"></p>', text: 'Hi' },
    copyId: '01JABCDEFGHJKMNPQRSTVWXYZ0.1',
    serviceDomain: 'mailyard.test',
  });
}

describe('buildMessage', () => {
  it('writes the service headers and never a Bcc header', async () => {
    const { raw, messageId } = await build({
      'X-Campaign': 'spring',
      'In-Reply-To': '<a@b>',
      References: '<a@b> <c@d>',
      'Thread-Id': 't1',
    });
    const text = raw.toString('utf8');
    const head = text.slice(0, text.indexOf('\r\n\r\n'));
    expect(messageId).toBe('<svc_mailer_01JABCDEFGHJKMNPQRSTVWXYZ0.1@mailyard.test>');
    expect(head).toContain(`Message-ID: ${messageId}`);
    expect(head).toContain('X-Is-Svc: true');
    expect(head).toContain('X-Campaign: spring');
    expect(head).toContain('In-Reply-To: <a@b>');
    expect(head).toContain('References: <a@b> <c@d>');
    expect(head).toContain('To: Ann <ann@example.com>');
    expect(head).toContain('Cc: cc@example.com');
    expect(head).toContain('Reply-To: support@example.org');
    expect(head).not.toMatch(/^Bcc:/im);
    expect(head).not.toMatch(/^Thread-Id:/im);
    expect(text).not.toContain('hidden@example.com');
    expect(text).toContain('Content-ID: <logo1>');
    expect(text).toContain('filename=a.txt');
  });

  it('uses a custom Message-ID value as the unique id', async () => {
    expect((await build({ 'Message-ID': '<order-123@shop>' })).messageId).toBe(
      '<svc_mailer_order-123_shop@mailyard.test>',
    );
    expect(serviceMessageId('abc', 'd.test')).toBe('<svc_mailer_abc@d.test>');
  });

  it('is DKIM-signed so that an independent verifier passes it', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    const { raw } = await build();
    const signed = await dkimSign(raw, {
      domainName: 'example.org',
      keySelector: 'sel1',
      privateKeyPem: pem,
    });
    const result = await dkimVerify(signed, {
      resolver: async (name: string, type: string) => {
        if (type === 'TXT' && name === 'sel1._domainkey.example.org') return [[`v=DKIM1; k=rsa; p=${p}`]];
        const err = new Error('not found') as NodeJS.ErrnoException;
        err.code = 'ENOTFOUND';
        throw err;
      },
    });
    const dkim = result.results[0];
    expect(dkim?.status?.result).toBe('pass');
    expect(dkim?.signingDomain).toBe('example.org');
  });
});
