/**
 * Embedded mode: the in-process bus loses queued commands in a crash. A send whose command
 * was already relayed (outbox row deleted, as the relay does) but never consumed is re-commanded at the next
 * start and delivered.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServiceContext, closeContext, configFrom, createLogger, openContext } from '@mailyard/platform';
import { eventually } from '@mailyard/testkit/eventually';
import { acceptSend, eventsOf, insertSmtpMailer, logsOf, newTenant } from '@mailyard/testkit/fixtures';
import { type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { start } from '../src/index';

jest.setTimeout(120_000);

let receiver: SmtpReceiver;
let dataDir: string;

beforeAll(async () => {
  receiver = await startSmtpReceiver();
  dataDir = mkdtempSync(join(tmpdir(), 'mailyard-recover-'));
});

afterAll(async () => {
  await receiver?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const open = () =>
  openContext(
    configFrom({
      DATABASE_URL: '',
      AMQP_URL: '',
      REDIS_URL: '',
      DATA_DIR: dataDir,
      SECRET_KEY: '5c'.repeat(32),
      LOG_LEVEL: 'error',
      OUTBOX_POLL_MS: '50',
      MAILER_ALLOW_PRIVATE_HOSTS: '1',
    }),
    createLogger('recover-test', 'error'),
  );

it('re-commands copies whose in-memory commands were lost, and delivers them once', async () => {
  // First run: the send is accepted and its command "relayed" into memory, then the process dies.
  let ctx: ServiceContext = await open();
  const tenantId = await newTenant(ctx.db);
  const mailerId = await insertSmtpMailer(ctx.db, ctx.sealer, tenantId, {
    port: receiver.port,
    secure: 'None',
  });
  const { refId } = await acceptSend(ctx.db, tenantId, {
    from: { email: 'sender@example.com' },
    to: [{ email: 'lost@example.com' }],
    mailer_id: mailerId,
    subject: 'Recovered',
    content: [{ type: 'text/plain', value: 'still here' }],
  });
  await ctx.db.query('DELETE FROM outbox');
  await closeContext(ctx);

  // Second run: nothing is in any queue; the stored send must still go out.
  ctx = await open();
  const service = await start(ctx);
  try {
    await eventually(
      async () => (await logsOf(ctx.db, refId)).every((l) => l.status === 'MAIL_DELIVERED'),
      'delivered after restart',
    );
    expect((await eventsOf(ctx.db, refId)).map((e) => e.event)).toEqual(['MAIL_DELIVERED']);
    expect(receiver.messages.filter((m) => m.raw.toString().includes('still here'))).toHaveLength(1);
  } finally {
    await service.stop();
    await closeContext(ctx);
  }
});
