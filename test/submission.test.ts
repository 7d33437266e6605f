/**
 * SMTP submission end to end with real clients (docs/submission.md), on the real servers
 * (PostgreSQL, RabbitMQ, Redis): nodemailer and swaks over STARTTLS to services/submission, the
 * send service delivering to a real SMTP receiver. AUTH is refused before TLS (530) and for a
 * wrong key (535); an authenticated message to two recipients (one Bcc) answers
 * `queued as <ref_id>`, both are delivered, the Bcc header is gone, a custom header kept, two log
 * rows; X-Mailyard-Mailer picks the mailer and is removed; an unowned sender gets 550; a
 * suppressed recipient is skipped; an oversize message gets 552; a bare-LF smuggling attempt an
 * SMTP refusal; a header block over the MX caps 552; undisclosed recipients a copy each; the
 * tenant's API budget 451 4.7.1; repeated wrong keys from one address 454.
 */
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { promisify } from 'node:util';
import { start as startSend } from '@mailyard/send';
import { createTenant, insertKey, suppressions } from '@mailyard/store';
import { start as startSubmission } from '@mailyard/submission';
import { eventually } from '@mailyard/testkit/eventually';
import { insertSmtpMailer, logsOf } from '@mailyard/testkit/fixtures';
import { parseMessage } from '@mailyard/testkit/mime';
import { type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { freePort } from '@mailyard/testkit/process';
import { createTestDatabase, createTestVhost, serverEnv } from '@mailyard/testkit/servers';
import nodemailer from 'nodemailer';
import { type OnContext, startOnContext } from './support/send-stack';

jest.setTimeout(120_000);
const run = promisify(execFile);

let on: OnContext;
let ctx: OnContext['ctx'];
let receiver: SmtpReceiver;
let drop: () => Promise<void> = async () => {};
let port = 0;
let apiKey = '';
let tenantId = '';
let mailerA = '';
let mailerB = '';
const MAX_BYTES = 200_000;

beforeAll(async () => {
  receiver = await startSmtpReceiver();
  port = await freePort();
  const db = await createTestDatabase();
  const vhost = createTestVhost();
  drop = async () => {
    await db.drop();
    await vhost.drop();
  };
  on = await startOnContext(
    'submission-test',
    {
      ...serverEnv(db, vhost),
      LOG_LEVEL: 'error',
      OUTBOX_POLL_MS: '50',
      MAILER_ALLOW_PRIVATE_HOSTS: '1',
      SERVICE_DOMAIN: 'mailyard.test',
      HOST: '127.0.0.1',
      DATA_DIR: await mkdtemp(join(tmpdir(), 'submission-')),
      SUBMISSION_PORT: String(port),
      SUBMISSION_MAX_BYTES: String(MAX_BYTES),
      SUBMISSION_AUTH_FAILURES: '4',
      RATE_LIMIT_STANDARD: '2',
      // a year-long fixed window is not crossed mid-test (a 60 s one could be on a loaded machine)
      RATE_LIMIT_WINDOW_SECONDS: String(365 * 24 * 3600),
    },
    [startSend, startSubmission],
  );
  ctx = on.ctx;
  const tenant = await createTenant(ctx.db, { name: 'submission', tier: 'enterprise' });
  tenantId = tenant.id;
  apiKey = tenant.apiKey;
  mailerA = await insertSmtpMailer(ctx.db, ctx.sealer, tenant.id, { port: receiver.port });
  mailerB = await insertSmtpMailer(ctx.db, ctx.sealer, tenant.id, { port: receiver.port });
  // mailer A is the one whose address is the sender; B is picked by header only
  await ctx.db.query(`UPDATE mailers SET email = 'other@example.com' WHERE id = $1`, [mailerB]);
});

afterAll(async () => {
  await on?.stop();
  await receiver?.close();
  await drop();
});

const transport = (pass: string) =>
  nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    requireTLS: true,
    tls: { rejectUnauthorized: false },
    auth: { user: 'apikey', pass },
  });

const refIdOf = (response: string) => {
  const m = /queued as (\S+)/.exec(response);
  if (!m) throw new Error(`no ref_id in ${response}`);
  return m[1]!;
};

/**
 * A raw SMTP dialogue (each line sent after the previous answer); the line `STARTTLS` upgrades the
 * connection to TLS after its 220, so what follows is written byte for byte over TLS.
 */
async function dialogue(lines: string[]): Promise<string[]> {
  let socket: Socket = new Socket();
  const answers: string[] = [];
  let buffer = '';
  let waiting: ((line: string) => void) | null = null;
  const onData = (d: Buffer) => {
    buffer += d.toString();
    let nl = buffer.indexOf('\r\n');
    while (nl !== -1) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 2);
      if (/^\d{3} /.test(line) && waiting) {
        const w = waiting;
        waiting = null;
        w(line);
      }
      nl = buffer.indexOf('\r\n');
    }
  };
  socket.on('data', onData);
  const next = () =>
    new Promise<string>((resolve) => {
      waiting = resolve;
    });
  const greeting = next();
  socket.connect(port, '127.0.0.1');
  answers.push(await greeting);
  for (const line of lines) {
    const answer = next();
    socket.write(`${line}\r\n`);
    answers.push(await answer);
    if (line === 'STARTTLS') {
      socket.off('data', onData);
      const secure = tlsConnect({ socket, rejectUnauthorized: false });
      await new Promise<void>((resolve) => secure.once('secureConnect', () => resolve()));
      secure.on('data', onData);
      socket = secure;
    }
  }
  socket.destroy();
  return answers;
}

it('offers STARTTLS and refuses AUTH before it with 530', async () => {
  const plain = Buffer.from(`\0apikey\0${apiKey}`).toString('base64');
  const [greeting, ehlo, auth] = await dialogue(['EHLO client.test', `AUTH PLAIN ${plain}`]);
  expect(greeting).toMatch(/^220 /);
  expect(ehlo).toMatch(/^250 /);
  expect(auth).toMatch(/^530 5\.7\.0 /);
});

it('a wrong key gets 535 5.7.8 (nodemailer)', async () => {
  await expect(transport('myk_not-a-key').verify()).rejects.toMatchObject({ responseCode: 535 });
});

it('a read-scoped key is refused like a wrong one', async () => {
  const readKey = await insertKey(ctx.db, tenantId, { scope: 'read' });
  await expect(transport(readKey.apiKey).verify()).rejects.toMatchObject({ responseCode: 535 });
});

it('two recipients, one Bcc: queued as <ref_id>, both delivered, Bcc gone, custom header kept, two log rows', async () => {
  const info = await transport(apiKey).sendMail({
    from: 'Sender <sender@example.com>',
    to: 'Ann <ann@rcpt.example>',
    bcc: 'hidden@rcpt.example',
    subject: 'Hello over SMTP',
    text: 'plain body',
    html: '<p>html body</p>',
    headers: { 'X-Custom-Thing': 'kept-value' },
    attachments: [{ filename: 'a.txt', content: 'attached' }],
  });
  const refId = refIdOf(info.response);
  expect(info.response).toMatch(/^250 2\.0\.0 queued as /);
  const logs = await eventually(async () => {
    const rows = await logsOf(ctx.db, refId);
    return rows.length === 2 && rows.every((r) => r.status === 'MAIL_DELIVERED') ? rows : null;
  }, 'two delivered log rows');
  expect(logs.map((r) => [r.recipient, r.recipient_type]).sort()).toEqual([
    ['ann@rcpt.example', 'to'],
    ['hidden@rcpt.example', 'bcc'],
  ]);
  const got = await eventually(() => {
    const m = receiver.messages.filter((x) => x.raw.toString().includes('Hello over SMTP'));
    return m.length >= 1 && m.flatMap((x) => x.to).length >= 2 ? m : null;
  }, 'both delivered');
  expect(got.flatMap((m) => m.to).sort()).toEqual(['ann@rcpt.example', 'hidden@rcpt.example']);
  for (const m of got) {
    const parsed = parseMessage(m.raw);
    expect(parsed.headers.bcc).toBeUndefined();
    expect(m.raw.toString()).not.toContain('hidden@rcpt.example>');
    expect(parsed.headers['x-custom-thing']).toBe('kept-value');
    expect(m.raw.toString()).toContain('a.txt');
  }
});

it('X-Mailyard-Mailer picks the mailer and is removed (swaks)', async () => {
  const { stdout } = await run('swaks', [
    '--server',
    `127.0.0.1:${port}`,
    '--tls',
    '--auth',
    'LOGIN',
    '--auth-user',
    'apikey',
    '--auth-password',
    apiKey,
    '--from',
    'sender@example.com',
    '--to',
    'bob@rcpt.example',
    '--header',
    'Subject: picked by header',
    '--header',
    `X-Mailyard-Mailer: ${mailerB}`,
    '--body',
    'hello from swaks',
  ]);
  const refId = refIdOf(stdout);
  const { rows } = await ctx.db.query<{ mailer_id: string }>(
    'SELECT mailer_id FROM sends WHERE ref_id = $1',
    [refId],
  );
  expect(rows[0]?.mailer_id).toBe(mailerB);
  const m = await eventually(
    () => receiver.messages.find((x) => x.raw.toString().includes('picked by header')),
    'swaks message delivered',
  );
  expect(m.raw.toString().toLowerCase()).not.toContain('x-mailyard-mailer');
  // without the header, the mailer whose address is the sender
  const info = await transport(apiKey).sendMail({
    from: 'sender@example.com',
    to: 'carl@rcpt.example',
    subject: 'by address',
    text: 'x',
  });
  const byAddress = await ctx.db.query<{ mailer_id: string }>(
    'SELECT mailer_id FROM sends WHERE ref_id = $1',
    [refIdOf(info.response)],
  );
  expect(byAddress.rows[0]?.mailer_id).toBe(mailerA);
});

it('a sender the tenant does not own gets 550', async () => {
  await expect(
    transport(apiKey).sendMail({
      from: 'someone@unowned.example',
      to: 'x@rcpt.example',
      subject: 's',
      text: 't',
    }),
  ).rejects.toMatchObject({ responseCode: 550 });
});

it('a suppressed recipient is skipped', async () => {
  await suppressions.add(ctx.db, tenantId, 'blocked@rcpt.example', 'manual');
  const info = await transport(apiKey).sendMail({
    from: 'sender@example.com',
    to: ['blocked@rcpt.example', 'open@rcpt.example'],
    subject: 'with a suppressed one',
    text: 'x',
  });
  const refId = refIdOf(info.response);
  const logs = await eventually(async () => {
    const rows = await logsOf(ctx.db, refId);
    return rows.length === 2 && rows.every((r) => r.status !== 'QUEUED') ? rows : null;
  }, 'outcomes');
  const by = Object.fromEntries(logs.map((r) => [r.recipient, r.status]));
  expect(by['open@rcpt.example']).toBe('MAIL_DELIVERED');
  expect(by['blocked@rcpt.example']).toBe('FAILED');
});

it('an oversize message gets 552', async () => {
  await expect(
    transport(apiKey).sendMail({
      from: 'sender@example.com',
      to: 'big@rcpt.example',
      subject: 'big',
      text: 'x'.repeat(MAX_BYTES + 1000),
    }),
  ).rejects.toMatchObject({ responseCode: 552 });
});

it('bare-LF end-of-data smuggling is refused with an SMTP answer, the smuggled command never runs', async () => {
  const plain = Buffer.from(`\0apikey\0${apiKey}`).toString('base64');
  const answers = await dialogue([
    'EHLO client.test',
    'STARTTLS',
    'EHLO client.test',
    `AUTH PLAIN ${plain}`,
    'MAIL FROM:<sender@example.com>',
    'RCPT TO:<s@rcpt.example>',
    'DATA',
    'From: sender@example.com\r\nTo: s@rcpt.example\r\nSubject: smuggle\r\n\r\nfirst\n.\nMAIL FROM:<evil@x.example>\r\nRCPT TO:<victim@rcpt.example>\r\n.',
    'QUIT',
  ]);
  expect(answers[4]).toMatch(/^235 /);
  expect(answers[7]).toMatch(/^354 /);
  expect(answers[8]).toMatch(/^550 5\.6\.0 .*bare CR or LF/);
  expect(answers[9]).toMatch(/^221 /);
  expect(receiver.messages.some((m) => m.to.includes('victim@rcpt.example'))).toBe(false);
});

it("over the tenant budget (the API's, shared) MAIL FROM gets 451 4.7.1", async () => {
  const small = await createTenant(ctx.db, { name: 'submission-small', tier: 'standard' });
  await insertSmtpMailer(ctx.db, ctx.sealer, small.id, { port: receiver.port });
  const t = transport(small.apiKey);
  const mail = { from: 'sender@example.com', to: 'budget@rcpt.example', subject: 'budget', text: 'x' };
  await t.sendMail(mail);
  await t.sendMail(mail);
  await expect(t.sendMail(mail)).rejects.toMatchObject({ responseCode: 451 });
  await expect(t.sendMail(mail)).rejects.toThrow(/4\.7\.1 Rate limit exceeded/);
});

it('a header block over the MX caps gets 552 5.3.4', async () => {
  const headers: Record<string, string> = {};
  for (let i = 0; i < 10_001; i++) headers[`X-Filler-${i}`] = 'x';
  await expect(
    transport(apiKey).sendMail({
      from: 'sender@example.com',
      to: 'h@rcpt.example',
      subject: 's',
      text: 't',
      headers,
    }),
  ).rejects.toMatchObject({ responseCode: 552, response: expect.stringContaining('10000 lines') });
});

it('undisclosed recipients: each gets a copy of its own that does not show the other', async () => {
  const info = await transport(apiKey).sendMail({
    envelope: { from: 'sender@example.com', to: ['u1@rcpt.example', 'u2@rcpt.example'] },
    from: 'sender@example.com',
    to: 'undisclosed-recipients:;',
    subject: 'undisclosed',
    text: 'x',
  });
  refIdOf(info.response);
  const got = await eventually(() => {
    const m = receiver.messages.filter((x) => x.raw.toString().includes('Subject: undisclosed'));
    return m.length === 2 ? m : null;
  }, 'two copies');
  for (const m of got) {
    expect(m.to).toHaveLength(1);
    const other = m.to[0] === 'u1@rcpt.example' ? 'u2@rcpt.example' : 'u1@rcpt.example';
    expect(m.raw.toString()).not.toContain(other);
  }
});

// Last: it blocks AUTH from this test's address.
it('past SUBMISSION_AUTH_FAILURES wrong keys from one address, AUTH answers 454 even for a good key', async () => {
  // two failures so far (the wrong key, the read-scoped key); two more reach the limit of 4
  await expect(transport('myk_wrong-1').verify()).rejects.toMatchObject({ responseCode: 535 });
  await expect(transport('myk_wrong-2').verify()).rejects.toMatchObject({ responseCode: 535 });
  await expect(transport(apiKey).verify()).rejects.toMatchObject({ responseCode: 454 });
});
