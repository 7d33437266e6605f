/** Email log rows never move backwards, and an event is recorded (and published) once. */
import { EMAIL_STATUS_RANK, EmailEventSchema, Exchange } from '@mailyard/contracts';
import { type ServiceContext, closeContext, configFrom, createLogger, openContext } from '@mailyard/platform';
import { acceptSend, eventsOf, insertSmtpMailer, logsOf, newTenant } from '@mailyard/testkit/fixtures';
import { type Stores, createStores } from '@mailyard/testkit/stores';
import { type PlannedEvent, recordEvents } from '../src/emit-event';

let stores: Stores;
let ctx: ServiceContext;
let tenantId: string;
let mailerId: string;

beforeAll(async () => {
  stores = await createStores();
  ctx = await openContext(
    configFrom({ LOG_LEVEL: 'error', ...stores.env }),
    createLogger('send-test', 'error'),
  );
  tenantId = await newTenant(ctx.db);
  mailerId = await insertSmtpMailer(ctx.db, ctx.sealer, tenantId, { port: 2 });
});

afterAll(async () => {
  await closeContext(ctx);
  await stores.drop();
});

async function oneRecipientSend() {
  const accepted = await acceptSend(ctx.db, tenantId, {
    from: { email: 'a@example.com' },
    to: [{ email: 'r@example.com' }],
    mailer_id: mailerId,
    subject: 's',
    content: [{ type: 'text/plain', value: 'x' }],
  });
  const { rows } = await ctx.db.query<{ id: string }>('SELECT id FROM email_logs WHERE ref_id = $1', [
    accepted.refId,
  ]);
  return { ...accepted, logId: rows[0]!.id };
}

function planned(
  event: PlannedEvent['event'],
  copyId: string,
  logId: string,
  extra: Partial<PlannedEvent> = {},
): PlannedEvent {
  return {
    event,
    copyId,
    recipients: [{ logId, email: 'r@example.com', failureReason: extra.failedReason ?? '' }],
    failedReason: '',
    messageId: '',
    ...extra,
  };
}

const eventCtx = (refId: string, attempt: number) => ({
  tenantId,
  refId,
  mailerId,
  customArgs: null,
  attempt,
});

it('ranks statuses so that opens and clicks are never overwritten by a late delivery', () => {
  expect(EMAIL_STATUS_RANK.QUEUED).toBeLessThan(EMAIL_STATUS_RANK.FAILED);
  expect(EMAIL_STATUS_RANK.FAILED).toBeLessThan(EMAIL_STATUS_RANK.MAIL_DELIVERED);
  expect(EMAIL_STATUS_RANK.MAIL_DELIVERED).toBeLessThan(EMAIL_STATUS_RANK.MAIL_OPENED);
  expect(EMAIL_STATUS_RANK.MAIL_OPENED).toBeLessThan(EMAIL_STATUS_RANK.MAIL_CLICKED);
});

it('a late MAIL_DELIVERED does not move an opened row back, but fills message_id and delivered_at', async () => {
  const s = await oneRecipientSend();
  await ctx.db.query(
    `UPDATE email_logs SET status = 'MAIL_OPENED', last_event = 'MAIL_OPENED' WHERE id = $1`,
    [s.logId],
  );
  const recorded = await ctx.db.transaction((tx) =>
    recordEvents(tx, eventCtx(s.refId, 1), [
      planned('MAIL_DELIVERED', s.copyIds[0]!, s.logId, { messageId: '<m@x>' }),
    ]),
  );
  expect(recorded).toHaveLength(1);
  const [log] = await logsOf(ctx.db, s.refId);
  expect(log).toMatchObject({
    status: 'MAIL_OPENED',
    last_event: 'MAIL_OPENED',
    message_id: '<m@x>',
    attempts: 1,
  });
  expect(log!.delivered_at).toBeInstanceOf(Date);
});

it('a final failure after a delivery is not recorded: a recipient gets one outcome', async () => {
  const s = await oneRecipientSend();
  await ctx.db.transaction((tx) =>
    recordEvents(tx, eventCtx(s.refId, 1), [planned('MAIL_DELIVERED', s.copyIds[0]!, s.logId)]),
  );
  const late = await ctx.db.transaction((tx) =>
    recordEvents(tx, eventCtx(s.refId, 2), [
      planned('SMTP_ERROR', s.copyIds[0]!, s.logId, {
        failedReason: 'x',
        send: { attempt: 2, maxAttempts: 5, retryScheduled: false },
      }),
    ]),
  );
  expect(late).toEqual([]);
  const [log] = await logsOf(ctx.db, s.refId);
  expect(log).toMatchObject({
    status: 'MAIL_DELIVERED',
    last_event: 'MAIL_DELIVERED',
    failure_reason: '',
    attempts: 1,
  });
  expect((await eventsOf(ctx.db, s.refId)).map((e) => e.event)).toEqual(['MAIL_DELIVERED']);
});

it('a retry-scheduled SMTP_ERROR keeps the row QUEUED with the reason; the event is written and enqueued once', async () => {
  const s = await oneRecipientSend();
  const event = planned('SMTP_ERROR', s.copyIds[0]!, s.logId, {
    failedReason: 'Temporary failure',
    providerError: '451 later',
    send: { attempt: 1, maxAttempts: 5, retryScheduled: true },
  });
  const first = await ctx.db.transaction((tx) => recordEvents(tx, eventCtx(s.refId, 1), [event]));
  const again = await ctx.db.transaction((tx) => recordEvents(tx, eventCtx(s.refId, 1), [event]));
  expect(first).toHaveLength(1);
  expect(again).toHaveLength(0);
  expect(EmailEventSchema.parse(first[0])).toMatchObject({
    success: false,
    details: {
      attempt: 1,
      max_attempts: 5,
      retry_scheduled: true,
      provider_error: '451 later',
      failed_reason: 'Temporary failure',
    },
  });
  const [log] = await logsOf(ctx.db, s.refId);
  expect(log).toMatchObject({
    status: 'QUEUED',
    last_event: 'SMTP_ERROR',
    failure_reason: 'Temporary failure',
    attempts: 1,
  });
  const { rows } = await ctx.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox WHERE exchange = $1 AND message->'payload'->'details'->>'ref_id' = $2`,
    [Exchange.events, s.refId],
  );
  expect(rows[0]!.n).toBe(1);
});
