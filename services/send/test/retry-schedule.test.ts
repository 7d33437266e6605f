/**
 * SEND_RETRY_DELAYS as the consumer applies it: each retry is published with the delay of its
 * attempt, the last value repeats when the list is shorter than the retries, and the next
 * attempt does not run before that delay.
 */
import { Queue, type SendEmailMessage, commandOfOneCopy } from '@mailyard/contracts';
import { eventually } from '@mailyard/testkit/eventually';
import { acceptSend, eventsOf, insertSmtpMailer, logsOf, newTenant } from '@mailyard/testkit/fixtures';
import { type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { type Stores, createStores } from '@mailyard/testkit/stores';
import { type SendHarness, startSendService } from './support/harness';

jest.setTimeout(120_000);

let stores: Stores;
let h: SendHarness;
let r: SmtpReceiver;
const dataAt: number[] = [];

beforeAll(async () => {
  stores = await createStores();
  h = await startSendService(stores, { SEND_RETRY_DELAYS: '0.5,1.5', SEND_MAX_ATTEMPTS: '4' });
  // Defers the first three messages (451), accepts the fourth.
  r = await startSmtpReceiver({
    onData: (_m, n) => {
      dataAt.push(Date.now());
      return n <= 3 ? [451, '4.3.0 Try again later'] : undefined;
    },
  });
});

afterAll(async () => {
  await h?.close();
  await r?.close();
  await stores?.drop();
});

it('publishes each retry with the delay of its attempt; the last delay repeats', async () => {
  const tenantId = await newTenant(h.ctx.db);
  const mailerId = await insertSmtpMailer(h.ctx.db, h.ctx.sealer, tenantId, { port: r.port, secure: 'None' });
  const { refId, commands } = await acceptSend(h.ctx.db, tenantId, {
    from: { email: 'sender@example.com' },
    mailer_id: mailerId,
    to: [{ email: 'later@example.com' }],
    subject: 'Hi',
    content: [{ type: 'text/plain', value: 'hello' }],
  });
  await eventually(
    async () => (await logsOf(h.ctx.db, refId))[0]?.status === 'MAIL_DELIVERED',
    'delivery on the fourth attempt',
  );
  const events = await eventsOf(h.ctx.db, refId);
  expect(events.map((e) => [e.event, e.attempt])).toEqual([
    ['SMTP_ERROR', 1],
    ['SMTP_ERROR', 2],
    ['SMTP_ERROR', 3],
    ['MAIL_DELIVERED', 4],
  ]);
  const retries = h.delayed.filter((d) => (d.payload as SendEmailMessage).sends[0]!.ref_id === refId);
  // Each retry a message of the one copy, in a span of its own of the copy's trace.
  const retry = (attempt: number, delayMs: number) => ({
    queue: Queue.send,
    payload: commandOfOneCopy({ ...commands[0]!, attempt }, expect.any(String)),
    delayMs,
  });
  expect(retries).toEqual([retry(2, 500), retry(3, 1500), retry(4, 1500)]);
  // The bus held each retry back: attempts are at least their delay apart (a lower bound only;
  // a slow machine makes the gaps longer, never shorter).
  expect(dataAt).toHaveLength(4);
  const gaps = dataAt.slice(1).map((t, i) => t - dataAt[i]!);
  expect(gaps[0]).toBeGreaterThanOrEqual(450);
  expect(gaps[1]).toBeGreaterThanOrEqual(1450);
  expect(gaps[2]).toBeGreaterThanOrEqual(1450);
});
