import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type IncomingEmailDetails,
  type IncomingEmailPayload,
  incomingEmailErrorEventSchema,
  incomingEmailEventSchema,
} from '@mailyard/contracts';
import { CORPUS, NOT_A_MESSAGE } from './fixtures/corpus';
import { buildIncomingEmail, buildIncomingEmails } from './incoming-email';

/** The MIME corpus in ./fixtures (written for this project), checked field by field. */
const context = {
  recipient: 'support@inbound.example.com',
  webhookId: 'wh_1',
  mailerId: 'mailer_1',
  mailerService: 'smtp',
  labelIds: ['INBOX'],
};

async function build(name: string): Promise<IncomingEmailDetails> {
  const payload: IncomingEmailPayload = await buildIncomingEmail(
    readFileSync(join(__dirname, 'fixtures', name)),
    context,
  );
  expect(payload.success).toBe(true);
  return incomingEmailEventSchema.parse(payload).details;
}

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const text = (b64content: string) => Buffer.from(b64content, 'base64').toString('utf8');

describe('the MIME corpus (fixtures/corpus.ts), every details field', () => {
  test.each(Object.keys(CORPUS))('%s', async (name) => {
    expect(await build(name)).toEqual({
      ...CORPUS[name],
      recipient: context.recipient,
      'thread-id': '',
      'webhook-id': 'wh_1',
      'mailer-id': 'mailer_1',
      'mailer-service': 'smtp',
      'label-ids': ['INBOX'],
    });
  });

  test(NOT_A_MESSAGE.file, async () => {
    const payload = await buildIncomingEmail(
      readFileSync(join(__dirname, 'fixtures', NOT_A_MESSAGE.file)),
      context,
    );
    expect(payload).toEqual({
      event: 'INCOMING_EMAIL',
      details: { error: NOT_A_MESSAGE.error, 'mailer-id': 'mailer_1', 'webhook-id': 'wh_1' },
      success: false,
    });
  });
});

describe('buildIncomingEmail', () => {
  test('empty input becomes the spec error form', async () => {
    expect(incomingEmailErrorEventSchema.parse(await buildIncomingEmail(Buffer.alloc(0), context))).toEqual({
      event: 'INCOMING_EMAIL',
      details: { error: 'empty message', 'mailer-id': 'mailer_1', 'webhook-id': 'wh_1' },
      success: false,
    });
  });

  test('reply-to is kept when it differs from from; thread id passes through', async () => {
    const raw = Buffer.from('From: a@example.org\r\nReply-To: b@example.org\r\nSubject: x\r\n\r\nbody\r\n');
    const payload = await buildIncomingEmail(raw, { ...context, threadId: 't1' });
    const d = incomingEmailEventSchema.parse(payload).details;
    expect(d['reply-to']).toBe('b@example.org');
    expect(d['thread-id']).toBe('t1');
    expect(d['content-type']).toBe('text/plain');
    expect(d['body-plain']).toBe('body\n');
  });

  test('several recipients of one message: one payload each, equal but for the context, not shared', async () => {
    const raw = readFileSync(join(__dirname, 'fixtures', 'alternative.eml'));
    const other = { ...context, recipient: 'sales@inbound.example.com', webhookId: 'wh_2' };
    const [a, b] = (await buildIncomingEmails(raw, [context, other])).map(
      (p) => incomingEmailEventSchema.parse(p).details,
    );
    expect(a).toEqual(await build('alternative.eml'));
    expect(b).toEqual({ ...a, recipient: 'sales@inbound.example.com', 'webhook-id': 'wh_2' });
    expect(b!.headers).not.toBe(a!.headers);
    const broken = await buildIncomingEmails(Buffer.alloc(0), [context, other]);
    expect(broken.map((p) => p.details['webhook-id'])).toEqual(['wh_1', 'wh_2']);
  });
});

describe('header names that are also Object.prototype members', () => {
  const names = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'];
  const raw = Buffer.from(
    `From: a@example.org\r\nSubject: proto\r\n${names.map((n) => `${n}: value of ${n}\r\n`).join('')}` +
      `${names.map((n) => `${n}: second ${n}\r\n`).join('')}\r\nthe body\r\n`,
  );

  test('are headers like any other: the message is posted whole, every value kept in order', async () => {
    const payload = await buildIncomingEmail(raw, context);
    expect(payload.success).toBe(true);
    if (!payload.success) return;
    expect(payload.details.subject).toBe('proto');
    expect(payload.details['body-plain']).toBe('the body\n');
    const headers = payload.details.headers;
    for (const n of names) {
      expect(Object.hasOwn(headers, n)).toBe(true);
      expect(headers[n]).toEqual([`value of ${n}`, `second ${n}`]);
    }
    // what the dispatcher posts: the JSON text, read back by a receiver
    const posted = JSON.parse(JSON.stringify(payload)) as { details: { headers: Record<string, unknown> } };
    for (const n of names)
      expect(Object.getOwnPropertyDescriptor(posted.details.headers, n)?.value).toEqual([
        `value of ${n}`,
        `second ${n}`,
      ]);
  });

  test('a message without them has none of them as headers', async () => {
    const payload = await buildIncomingEmail(Buffer.from('From: a@example.org\r\n\r\nx\r\n'), context);
    if (!payload.success) throw new Error('expected the success form');
    for (const n of names) expect(payload.details.headers[n]).toBeUndefined();
  });
});
