/**
 * The send service against real peers: PostgreSQL, RabbitMQ and `smtp-server` receivers that
 * accept, defer (4xx), refuse (5xx) or refuse logins, through smtp/basic_smtp mailers.
 */
import {
  Exchange,
  RoutingKey,
  SEND_EMAIL_COMMAND,
  SEND_EMAIL_COMMAND_VERSION,
  type StoredSendRequest,
  commandOfOneCopy,
} from '@mailyard/contracts';
import { envelope, metricsRegistry } from '@mailyard/platform';
import { suppressions } from '@mailyard/store';
import { eventually } from '@mailyard/testkit/eventually';
import {
  type EventRow,
  acceptSend,
  eventsOf,
  insertSmtpMailer,
  logsOf,
  newTenant,
  setMailerState,
} from '@mailyard/testkit/fixtures';
import { type Reply, type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { type Stores, createStores } from '@mailyard/testkit/stores';
import { type SendHarness, startSendService } from './support/harness';

jest.setTimeout(120_000);

let stores: Stores;
let h: SendHarness;
let tenantId: string;
const receivers: SmtpReceiver[] = [];

async function receiver(opts: Parameters<typeof startSmtpReceiver>[0] = {}): Promise<SmtpReceiver> {
  const r = await startSmtpReceiver(opts);
  receivers.push(r);
  return r;
}

async function mailerFor(
  r: SmtpReceiver,
  extra: { username?: string; password?: string } = {},
): Promise<string> {
  return insertSmtpMailer(h.ctx.db, h.ctx.sealer, tenantId, { port: r.port, secure: 'None', ...extra });
}

async function skipped(): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric('mailyard_send_commands_skipped_total')?.get();
  return metric?.values[0]?.value ?? 0;
}

const TERMINAL = (e: EventRow) =>
  ['MAIL_DELIVERED', 'PHISHING', 'MAIL_POLICY_REJECTION', 'MAIL_GENERATION_REJECTION'].includes(e.event) ||
  (e.event === 'SMTP_ERROR' && e.payload.details.retry_scheduled === false);

/** Waits until every recipient of the send has its terminal event; returns all events. */
async function settled(refId: string, recipients: number): Promise<EventRow[]> {
  return eventually(async () => {
    const events = await eventsOf(h.ctx.db, refId);
    const done = events.filter(TERMINAL).flatMap((e) => e.payload.details.email);
    return done.length >= recipients ? events : null;
  }, `terminal events of ${refId}`);
}

const base = (mailerId: string) => ({
  from: { email: 'sender@example.com', name: 'Sender' },
  mailer_id: mailerId,
  subject: 'Hello {{name}}',
  content: [
    { type: 'text/plain' as const, value: 'Hi {{name}}, code {{code}}.' },
    { type: 'text/html' as const, value: '<p>Hi {{name}}, code {{code}}.</p>' },
  ],
});

beforeAll(async () => {
  stores = await createStores();
  // Published outbox rows are kept (marked sent): the deactivation test reads its MAILER_DEACTIVATED row.
  h = await startSendService(stores, { SEND_MAX_ATTEMPTS: '3', OUTBOX_RETENTION_MS: '3600000' });
  tenantId = await newTenant(h.ctx.db);
});

afterAll(async () => {
  await h?.close();
  await Promise.all(receivers.map((r) => r.close()));
  await stores?.drop();
});

describe('delivery', () => {
  it('sends one personalized copy per recipient with substitutions, with headers and attachments', async () => {
    const r = await receiver();
    const mailerId = await mailerFor(r);
    const { refId, copyIds } = await acceptSend(h.ctx.db, tenantId, {
      ...base(mailerId),
      to: [{ email: 'ann@example.com', name: 'Ann' }, { email: 'Bob@Example.com' }],
      cc: [{ email: 'carol@example.net' }],
      bcc: [{ email: 'dave@example.org' }],
      replyTo: 'replies@example.com',
      headers: {
        'X-Campaign': 'spring',
        'In-Reply-To': '<prev@example.com>',
        References: '<root@example.com> <prev@example.com>',
      },
      substitutions: {
        'ann@example.com': { name: 'Ann <admin>', code: 11 },
        'bob@example.com': { name: 'Bob', code: '22' },
      },
      attachments: [
        {
          filename: 'notes.txt',
          content: Buffer.from('attached text').toString('base64'),
          type: 'text/plain',
        },
        {
          filename: 'logo.png',
          content: Buffer.from('PNG').toString('base64'),
          type: 'image/png',
          disposition: 'inline',
          content_id: 'logo',
        },
      ],
      custom_args: { order: 7 },
      campaign_id: 'spring-2026',
    });
    expect(copyIds).toHaveLength(2);
    const events = await settled(refId, 6);
    const stamps = events.map((e) => `${e.event}/${e.payload.details.event_at}`);
    expect(new Set(stamps).size).toBe(stamps.length);
    const messages = await r.waitForMessages(2);

    const forAnn = messages.find((m) => m.raw.toString().includes('To: Ann <ann@example.com>'))!;
    const forBob = messages.find((m) => m.raw.toString().includes('To: Bob@example.com'))!;
    expect(forAnn.to.sort()).toEqual(['ann@example.com', 'carol@example.net', 'dave@example.org']);
    expect(forBob.to.sort()).toEqual(['Bob@example.com', 'carol@example.net', 'dave@example.org']);
    const ann = forAnn.raw.toString();
    expect(ann).toContain('Subject: Hello Ann <admin>');
    expect(ann).toContain('Hi Ann <admin>, code 11.');
    expect(ann).toContain('Hi Ann &lt;admin&gt;, code 11.');
    expect(forBob.raw.toString()).toContain('Hi Bob, code 22.');
    expect(ann).toContain(`Message-ID: <svc_mailer_${copyIds[0]}@mailyard.test>`);
    expect(forBob.raw.toString()).toContain(`Message-ID: <svc_mailer_${copyIds[1]}@mailyard.test>`);
    for (const header of [
      'X-Is-Svc: true',
      'X-Campaign: spring',
      'In-Reply-To: <prev@example.com>',
      'References: <root@example.com> <prev@example.com>',
      'Reply-To: replies@example.com',
      'Cc: carol@example.net',
      'From: Sender <sender@example.com>',
    ]) {
      expect(ann).toContain(header);
    }
    expect(ann).not.toMatch(/^Bcc:/im);
    expect(ann).not.toContain('dave@example.org');
    expect(ann).toContain('Content-ID: <logo>');
    expect(ann).toContain(Buffer.from('attached text').toString('base64'));

    const delivered = events.filter((e) => e.event === 'MAIL_DELIVERED');
    expect(delivered).toHaveLength(2);
    const d = delivered.find((e) => e.copy_id === copyIds[0])!;
    expect(d.payload).toEqual({
      event: 'MAIL_DELIVERED',
      success: true,
      details: {
        ref_id: refId,
        mailer_id: mailerId,
        email: ['ann@example.com', 'carol@example.net', 'dave@example.org'],
        custom_args: { order: 7 },
        message_id: `<svc_mailer_${copyIds[0]}@mailyard.test>`,
        thread_id: '',
        webhook_id: '',
        event_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
        tracking: {
          time: '',
          ip: '',
          user_agent: '',
          browser_name: '',
          browser_version: '',
          os: '',
          device_type: '',
          platform: '',
          url: '',
          country: '',
          city: '',
          region: '',
          time_zone: '',
          bot: false,
        },
        failed_reason: '',
      },
    });
    const logs = await logsOf(h.ctx.db, refId);
    expect(logs).toHaveLength(6);
    for (const l of logs) {
      expect(l).toMatchObject({
        status: 'MAIL_DELIVERED',
        last_event: 'MAIL_DELIVERED',
        attempts: 1,
        failure_reason: '',
      });
      expect(l.delivered_at).toBeInstanceOf(Date);
      expect(l.message_id).toMatch(/^<svc_mailer_.+@mailyard\.test>$/);
    }
    // the log keeps the subject as accepted (docs/api/logs.md)
    expect(logs.find((l) => l.recipient === 'ann@example.com')?.subject).toBe('Hello {{name}}');
    // published on the bus as well (validated against the contract schema by the collector)
    await eventually(
      async () => h.published().filter((e) => e.details.ref_id === refId).length === 2,
      'published events',
    );
  });

  it('uses a custom Message-ID header as the unique id; one copy to all recipients without substitutions', async () => {
    const r = await receiver();
    const mailerId = await mailerFor(r);
    const { refId } = await acceptSend(h.ctx.db, tenantId, {
      ...base(mailerId),
      to: [{ email: 'x1@example.com' }, { email: 'x2@example.com' }],
      headers: { 'Message-ID': '<order-42@shop.example>' },
    });
    const events = await settled(refId, 2);
    const [m] = await r.waitForMessages(1);
    expect(m!.to.sort()).toEqual(['x1@example.com', 'x2@example.com']);
    const raw = m!.raw.toString();
    expect(raw).toContain('Message-ID: <svc_mailer_order-42_shop.example@mailyard.test>');
    expect(raw).toContain('To: x1@example.com, x2@example.com');
    expect(raw).toContain('Subject: Hello ');
    expect(raw).toContain('Hi , code .');
    expect(events.map((e) => e.event)).toEqual(['MAIL_DELIVERED']);
    expect(events[0]!.payload.details.custom_args).toBeNull();
  });

  it('reuses pooled connections across messages', async () => {
    const r = await receiver();
    const mailerId = await mailerFor(r);
    const to = Array.from({ length: 40 }, (_, i) => ({ email: `pool${i}@example.com` }));
    const { refId } = await acceptSend(h.ctx.db, tenantId, {
      ...base(mailerId),
      to,
      substitutions: Object.fromEntries(to.map((t, i) => [t.email, { name: `P${i}`, code: i }])),
    });
    await settled(refId, 40);
    expect(r.messages).toHaveLength(40);
    // SEND_POOL_CONNECTIONS (8) connections at most, each carrying several messages
    expect(r.connections()).toBeLessThanOrEqual(8);
  });

  it('logs in with the mailer credentials', async () => {
    const r = await receiver({ auth: { user: 'alice', pass: 's3cret' } });
    const mailerId = await mailerFor(r, { username: 'alice', password: 's3cret' });
    const { refId } = await acceptSend(h.ctx.db, tenantId, {
      ...base(mailerId),
      to: [{ email: 'auth@example.com' }],
    });
    await settled(refId, 1);
    const [m] = await r.waitForMessages(1);
    expect(m!.user).toBe('alice');
  });
});

describe('retries', () => {
  it('retries a 4xx with back-off, then delivers', async () => {
    const r = await receiver({
      onData: (_m, n): Reply | undefined => (n === 1 ? [451, '4.3.0 Try again later'] : undefined),
    });
    const mailerId = await mailerFor(r);
    const { refId } = await acceptSend(h.ctx.db, tenantId, {
      ...base(mailerId),
      to: [{ email: 'retry@example.com' }],
    });
    const events = await settled(refId, 1);
    expect(events.map((e) => [e.event, e.attempt])).toEqual([
      ['SMTP_ERROR', 1],
      ['MAIL_DELIVERED', 2],
    ]);
    expect(events[0]!.payload).toMatchObject({
      event: 'SMTP_ERROR',
      success: false,
      details: {
        email: ['retry@example.com'],
        attempt: 1,
        max_attempts: 3,
        retry_scheduled: true,
        provider_error: '451 4.3.0 Try again later',
        failed_reason: 'Temporary failure: recipient mail system problem',
        message_id: '',
      },
    });
    expect(r.messages).toHaveLength(1);
    const [log] = await logsOf(h.ctx.db, refId);
    expect(log).toMatchObject({ status: 'MAIL_DELIVERED', attempts: 2, failure_reason: '' });
  });

  it('ends with a final SMTP_ERROR when the attempts are used up', async () => {
    const r = await receiver({ onData: () => [450, '4.2.1 Mailbox busy'] });
    const mailerId = await mailerFor(r);
    const { refId } = await acceptSend(h.ctx.db, tenantId, {
      ...base(mailerId),
      to: [{ email: 'busy@example.com' }],
    });
    const events = await settled(refId, 1);
    expect(events.map((e) => [e.event, e.attempt, e.payload.details.retry_scheduled])).toEqual([
      ['SMTP_ERROR', 1, true],
      ['SMTP_ERROR', 2, true],
      ['SMTP_ERROR', 3, false],
    ]);
    expect(events[2]!.payload.details).toMatchObject({
      max_attempts: 3,
      failed_reason: 'Temporary failure: recipient mailbox is disabled',
    });
    const [log] = await logsOf(h.ctx.db, refId);
    expect(log).toMatchObject({ status: 'FAILED', last_event: 'SMTP_ERROR', attempts: 3 });
    expect(r.dataCount()).toBe(3);
  });

  it('treats connection failures as temporary', async () => {
    const closed = await receiver();
    const port = closed.port;
    await closed.close();
    const mailerId = await insertSmtpMailer(h.ctx.db, h.ctx.sealer, tenantId, { port, secure: 'None' });
    const { refId } = await acceptSend(h.ctx.db, tenantId, {
      ...base(mailerId),
      to: [{ email: 'nobody@example.com' }],
    });
    const events = await settled(refId, 1);
    expect(events).toHaveLength(3);
    expect(events[0]!.payload.details).toMatchObject({
      retry_scheduled: true,
      failed_reason: 'Could not connect to the mail server',
    });
    expect(String(events[0]!.payload.details.provider_error)).toContain('ECONNREFUSED');
  });

  it('fails a 5xx at once, with no retry', async () => {
    const r = await receiver({
      onRcpt: () => [550, '5.1.1 <gone@example.com>: Recipient address rejected: User unknown'],
    });
    const mailerId = await mailerFor(r);
    const { refId } = await acceptSend(h.ctx.db, tenantId, {
      ...base(mailerId),
      to: [{ email: 'gone@example.com' }],
    });
    const events = await settled(refId, 1);
    expect(events).toHaveLength(1);
    expect(events[0]!.payload.details).toMatchObject({
      attempt: 1,
      max_attempts: 3,
      retry_scheduled: false,
      failed_reason: 'Recipient address does not exist',
      provider_error: '550 5.1.1 <gone@example.com>: Recipient address rejected: User unknown',
    });
    const [log] = await logsOf(h.ctx.db, refId);
    expect(log).toMatchObject({
      status: 'FAILED',
      failure_reason: 'Recipient address does not exist',
      attempts: 1,
    });
    expect(r.dataCount()).toBe(0);
  });

  it('a final 550 5.1.1 is invalid_recipient and suppresses the address; a blocklist 5.7.1 and a 4xx do not', async () => {
    const r = await receiver({
      onRcpt: (address) => {
        if (address === 'dead@example.com') return [550, '5.1.1 <dead@example.com>: user does not exist'];
        if (address === 'listed@example.com')
          return [554, '5.7.1 Service unavailable; Client host [192.0.2.10] blocked using zen.spamhaus.org'];
        if (address === 'full@example.com') return [452, '4.2.2 Mailbox full'];
        return undefined;
      },
    });
    const mailerId = await mailerFor(r);
    const { refId } = await acceptSend(h.ctx.db, tenantId, {
      ...base(mailerId),
      to: [{ email: 'dead@example.com' }, { email: 'listed@example.com' }, { email: 'full@example.com' }],
    });
    const events = await settled(refId, 3);
    const summary = events.map((e) => [
      e.attempt,
      e.payload.details.email,
      e.payload.details.retry_scheduled,
      e.payload.details.bounce_category,
    ]);
    // The final failures of one attempt are split by category: each recipient's event names its own.
    expect(summary).toEqual(
      expect.arrayContaining([
        [1, ['dead@example.com'], false, 'invalid_recipient'],
        [1, ['listed@example.com'], false, 'reputation'],
        [1, ['full@example.com'], true, 'mailbox_full'],
        [2, ['full@example.com'], true, 'mailbox_full'],
        [3, ['full@example.com'], false, 'mailbox_full'],
      ]),
    );
    expect(events).toHaveLength(5);
    expect(await suppressions.get(h.ctx.db, tenantId, 'dead@example.com')).toMatchObject({
      reason: 'hard_bounce',
      ref_id: refId,
    });
    expect(await suppressions.get(h.ctx.db, tenantId, 'listed@example.com')).toBeNull();
    // A 4xx that ran out of attempts is final but not permanent: the mailbox exists.
    expect(await suppressions.get(h.ctx.db, tenantId, 'full@example.com')).toBeNull();
  });

  it('settles each recipient on its own when the server answers differently per recipient', async () => {
    let cTries = 0;
    const r = await receiver({
      onRcpt: (address) => {
        if (address === 'bad@example.com') return [550, '5.1.1 No such user'];
        if (address === 'later@example.com' && ++cTries === 1) return [452, '4.2.2 Mailbox full'];
        return undefined;
      },
    });
    const mailerId = await mailerFor(r);
    const { refId, copyIds } = await acceptSend(h.ctx.db, tenantId, {
      ...base(mailerId),
      to: [{ email: 'ok@example.com' }, { email: 'bad@example.com' }, { email: 'later@example.com' }],
    });
    const events = await settled(refId, 3);
    const summary = events.map((e) => [
      e.event,
      e.attempt,
      e.payload.details.email,
      e.payload.details.retry_scheduled ?? null,
    ]);
    expect(summary).toEqual(
      expect.arrayContaining([
        ['MAIL_DELIVERED', 1, ['ok@example.com'], null],
        ['SMTP_ERROR', 1, ['later@example.com'], true],
        ['SMTP_ERROR', 1, ['bad@example.com'], false],
        ['MAIL_DELIVERED', 2, ['later@example.com'], null],
      ]),
    );
    expect(events).toHaveLength(4);
    expect(r.messages.map((m) => m.to)).toEqual([['ok@example.com'], ['later@example.com']]);
    const logs = await logsOf(h.ctx.db, refId);
    const byRecipient = Object.fromEntries(logs.map((l) => [l.recipient, l]));
    expect(byRecipient['ok@example.com']).toMatchObject({ status: 'MAIL_DELIVERED', copy_id: copyIds[0] });
    expect(byRecipient['later@example.com']).toMatchObject({ status: 'MAIL_DELIVERED', attempts: 2 });
    expect(byRecipient['bad@example.com']).toMatchObject({
      status: 'FAILED',
      failure_reason: 'Recipient address does not exist',
    });
    // A copy's identity never changes: every event and log row stays under the command's copy
    // (no `<copy_id>~f<attempt>` split), and each recipient has one SMTP_ERROR per attempt.
    expect(new Set(events.map((e) => e.copy_id))).toEqual(new Set([copyIds[0]]));
    expect(new Set(logs.map((l) => l.copy_id))).toEqual(new Set([copyIds[0]]));
    const smtpErrors = events
      .filter((e) => e.event === 'SMTP_ERROR')
      .flatMap((e) => e.payload.details.email.map((email) => `${email}/${e.attempt}`));
    expect(new Set(smtpErrors).size).toBe(smtpErrors.length);
    // ref_id + event + event_at (+ attempt) is unique per event (docs/architecture.md, reliability 2).
    const keys = events.map((e) => `${e.event}/${e.payload.details.event_at}/${e.attempt}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('gives every recipient its own copy when tracking is on, showing the original To/Cc', async () => {
    const r = await receiver();
    const mailerId = await mailerFor(r);
    const { refId, copyIds } = await acceptSend(h.ctx.db, tenantId, {
      ...base(mailerId),
      to: [{ email: 'one@example.com' }, { email: 'two@example.com' }],
      cc: [{ email: 'three@example.com' }],
      settings: { open_tracking: { enable: true } },
    });
    expect(copyIds).toHaveLength(3);
    const events = await settled(refId, 3);
    expect(events.map((e) => e.payload.details.email)).toEqual(
      expect.arrayContaining([['one@example.com'], ['two@example.com'], ['three@example.com']]),
    );
    const messages = await r.waitForMessages(3);
    expect(messages.map((m) => m.to).sort()).toEqual([
      ['one@example.com'],
      ['three@example.com'],
      ['two@example.com'],
    ]);
    const logs = await logsOf(h.ctx.db, refId);
    for (const m of messages) {
      const raw = m.raw.toString();
      expect(raw).toMatch(/^To: one@example\.com, two@example\.com$/m);
      expect(raw).toMatch(/^Cc: three@example\.com$/m);
      // Each recipient's log row is a copy of its own.
      const log = logs.find((l) => l.recipient === m.to[0])!;
      expect(log.copy_id).not.toBe(logs.find((l) => l.recipient !== m.to[0])!.copy_id);
    }
    expect(new Set(logs.map((l) => l.copy_id)).size).toBe(3);
  });
});

describe('refusals before sending', () => {
  it('deactivates the mailer when the server rejects its credentials', async () => {
    const r = await receiver({ auth: 'reject' });
    const mailerId = await mailerFor(r, { username: 'alice', password: 'wrong' });
    const { refId } = await acceptSend(h.ctx.db, tenantId, {
      ...base(mailerId),
      to: [{ email: 'a1@example.com' }],
    });
    const events = await settled(refId, 1);
    expect(events).toHaveLength(1);
    expect(events[0]!.payload.details).toMatchObject({
      retry_scheduled: false,
      attempt: 1,
      failed_reason: 'Authentication credentials invalid',
      provider_error: '535 5.7.8 Authentication credentials invalid',
    });
    const state = await eventually(async () => {
      const { rows } = await h.ctx.db.query<{ state: string; state_reason: string }>(
        'SELECT state, state_reason FROM mailers WHERE id = $1',
        [mailerId],
      );
      return rows[0]?.state === 'deactivated' ? rows[0] : null;
    }, 'mailer deactivated');
    expect(state.state_reason).toBe('provider_auth_error');
    const { rows } = await h.ctx.db.query<{ message: { payload: { details: Record<string, unknown> } } }>(
      `SELECT message FROM outbox WHERE routing_key = $1 AND message->'payload'->'details'->>'mailer_id' = $2`,
      [RoutingKey.mailerDeactivated, mailerId],
    );
    expect(rows[0]?.message.payload.details).toMatchObject({
      failed_reason: 'provider_auth_error',
      config_type: 'basic_smtp',
    });

    // the next send through it is a mailer-config load failure, nothing is attempted
    const logins = r.authAttempts();
    const second = await acceptSend(h.ctx.db, tenantId, {
      ...base(mailerId),
      to: [{ email: 'a2@example.com' }],
    });
    const next = await settled(second.refId, 1);
    expect(
      next.map((e) => [e.event, e.payload.details.failed_reason, e.payload.details.retry_scheduled]),
    ).toEqual([['SMTP_ERROR', 'Mailer is deactivated', false]]);
    expect(r.authAttempts()).toBe(logins);
  });

  it.each([
    ['disabled', 'Mailer is disabled'],
    ['deleted', 'Mailer not found'],
  ] as const)('refuses a copy whose mailer was %s after acceptance', async (state, reason) => {
    const r = await receiver();
    const mailerId = await mailerFor(r);
    await setMailerState(h.ctx.db, mailerId, state);
    const { refId } = await acceptSend(h.ctx.db, tenantId, {
      ...base(mailerId),
      to: [{ email: 'p@example.com' }],
    });
    // A mailer-config load failure (docs/architecture.md, reliability 2): a final
    // SMTP_ERROR with attempt metadata for every intended recipient, empty message/thread ids.
    const events = await settled(refId, 1);
    expect(events.map((e) => e.event)).toEqual(['SMTP_ERROR']);
    expect(events[0]!.payload).toMatchObject({
      success: false,
      details: {
        email: ['p@example.com'],
        failed_reason: reason,
        message_id: '',
        thread_id: '',
        attempt: 1,
        max_attempts: expect.any(Number),
        retry_scheduled: false,
      },
    });
    const [log] = await logsOf(h.ctx.db, refId);
    expect(log).toMatchObject({
      status: 'FAILED',
      last_event: 'SMTP_ERROR',
      failure_reason: reason,
    });
    expect(r.dataCount()).toBe(0);
  });

  it('suppresses unsubscribed recipients and sends to the rest', async () => {
    const r = await receiver();
    const mailerId = await mailerFor(r);
    await suppressions.add(h.ctx.db, tenantId, 'Gone@Example.com');
    const { refId } = await acceptSend(h.ctx.db, tenantId, {
      ...base(mailerId),
      to: [{ email: 'gone@example.com' }, { email: 'stay@example.com' }],
    });
    const events = await settled(refId, 2);
    expect(events.map((e) => [e.event, e.payload.details.email, e.payload.details.failed_reason])).toEqual([
      ['MAIL_GENERATION_REJECTION', ['gone@example.com'], 'recipient unsubscribed'],
      ['MAIL_DELIVERED', ['stay@example.com'], ''],
    ]);
    const [m] = await r.waitForMessages(1);
    expect(m!.to).toEqual(['stay@example.com']);
    const logs = await logsOf(h.ctx.db, refId);
    expect(logs.find((l) => l.recipient === 'gone@example.com')).toMatchObject({
      status: 'FAILED',
      last_event: 'MAIL_GENERATION_REJECTION',
      failure_reason: 'recipient unsubscribed',
    });

    // every recipient suppressed: nothing is sent at all
    const only = await acceptSend(h.ctx.db, tenantId, {
      ...base(mailerId),
      to: [{ email: 'gone@example.com' }],
    });
    expect((await settled(only.refId, 1)).map((e) => e.event)).toEqual(['MAIL_GENERATION_REJECTION']);
    expect(r.dataCount()).toBe(1);
  });

  it("applies only the sending tenant's suppressions", async () => {
    const r = await receiver();
    const mailerId = await mailerFor(r);
    const other = await newTenant(h.ctx.db);
    const otherMailer = await insertSmtpMailer(h.ctx.db, h.ctx.sealer, other, {
      port: r.port,
      secure: 'None',
    });
    // This tenant unsubscribed the address; the other tenant did not.
    await suppressions.add(h.ctx.db, tenantId, 'Shared@Example.com');
    const mine = await acceptSend(h.ctx.db, tenantId, {
      ...base(mailerId),
      to: [{ email: 'shared@example.com' }],
    });
    const theirs = await acceptSend(h.ctx.db, other, {
      ...base(otherMailer),
      to: [{ email: 'shared@example.com' }],
    });
    expect((await settled(mine.refId, 1)).map((e) => e.event)).toEqual(['MAIL_GENERATION_REJECTION']);
    expect((await settled(theirs.refId, 1)).map((e) => e.event)).toEqual(['MAIL_DELIVERED']);
    const [m] = await r.waitForMessages(1);
    expect(m!.to).toEqual(['shared@example.com']);
    expect(r.dataCount()).toBe(1);
  });

  it('stops phishing content before sending', async () => {
    const r = await receiver();
    const mailerId = await mailerFor(r);
    const { refId } = await acceptSend(h.ctx.db, tenantId, {
      ...base(mailerId),
      to: [{ email: 'victim@example.com' }],
      content: [
        { type: 'text/html', value: '<a href="https://evil.example.net/login">https://www.mybank.com</a>' },
      ],
    });
    const events = await settled(refId, 1);
    expect(events.map((e) => e.event)).toEqual(['PHISHING']);
    expect(events[0]!.payload).toMatchObject({
      success: false,
      details: { failed_reason: 'Link text shows www.mybank.com but the link goes to evil.example.net' },
    });
    expect(r.dataCount()).toBe(0);
  });

  it('reports a copy that cannot be rendered as a final SMTP_ERROR with an empty message_id', async () => {
    const r = await receiver();
    const mailerId = await mailerFor(r);
    // The stored request lost its content (accepted by an older gateway, or damaged).
    const { refId } = await acceptSend(
      h.ctx.db,
      tenantId,
      { ...base(mailerId), to: [{ email: 'render@example.com' }] },
      { storeAs: ({ content: _content, ...rest }) => rest as StoredSendRequest },
    );
    const events = await settled(refId, 1);
    expect(events).toHaveLength(1);
    expect(events[0]!.payload.details).toMatchObject({
      attempt: 1,
      max_attempts: 3,
      retry_scheduled: false,
      message_id: '',
      thread_id: '',
      failed_reason: 'Rendering failed: The send has no content to render',
    });
    expect(events[0]!.payload.details.provider_error).toBeUndefined();
    expect(r.dataCount()).toBe(0);
  });
});

describe('idempotency', () => {
  it('does not send again when a command is delivered twice', async () => {
    const r = await receiver();
    const mailerId = await mailerFor(r);
    const { refId, commands } = await acceptSend(h.ctx.db, tenantId, {
      ...base(mailerId),
      to: [{ email: 'once@example.com' }],
    });
    await settled(refId, 1);
    await r.waitForMessages(1);
    const before = await skipped();
    for (let i = 0; i < 3; i++) {
      await h.ctx.bus.publish(
        Exchange.commands,
        RoutingKey.sendEmail,
        envelope(SEND_EMAIL_COMMAND, commandOfOneCopy(commands[0]!), {
          tenantId,
          version: SEND_EMAIL_COMMAND_VERSION,
        }),
      );
    }
    await eventually(async () => (await skipped()) >= before + 3, 'the duplicates were consumed');
    expect(await eventsOf(h.ctx.db, refId)).toHaveLength(1);
    expect(r.messages.filter((m) => m.to.includes('once@example.com'))).toHaveLength(1);
  });
});
