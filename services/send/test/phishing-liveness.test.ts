/**
 * Liveness under hostile content: the send service runs as production runs it (its own process,
 * services/send/src/main.ts, on the real PostgreSQL and RabbitMQ) while tenants send the bodies
 * that used to freeze it (a 128 KB link text, 8,000 nested anchors, a body with more links than
 * the budget allows). Its /healthz on the ops port is polled the whole time: every probe must
 * answer 200, and probes must be answered while the hostile copies' outcomes are still pending
 * (the order of events, not a time bound: that the check yields between its slices is counted
 * in src/phishing-budget.test.ts), and every copy must reach its defined outcome.
 */
import { type ServiceContext, closeContext, configFrom, createLogger, openContext } from '@mailyard/platform';
import { eventually } from '@mailyard/testkit/eventually';
import { type EventRow, acceptSend, eventsOf, insertSmtpMailer, newTenant } from '@mailyard/testkit/fixtures';
import { type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { type Spawned, freePort, spawnTs } from '@mailyard/testkit/process';
import { type Stores, createStores } from '@mailyard/testkit/stores';

jest.setTimeout(240_000);

let stores: Stores;
let ctx: ServiceContext;
let receiver: SmtpReceiver;
let service: Spawned;
let opsPort: number;

beforeAll(async () => {
  stores = await createStores();
  ctx = await openContext(
    configFrom({ LOG_LEVEL: 'error', ...stores.env }),
    createLogger('liveness', 'error'),
  );
  receiver = await startSmtpReceiver();
  opsPort = await freePort();
  service = spawnTs('services/send/src/main.ts', {
    ...stores.env,
    OPS_PORT: String(opsPort),
    HOST: '127.0.0.1',
    MAILER_ALLOW_PRIVATE_HOSTS: '1',
    PHISHING_MAX_LINKS: '9000',
  });
  await service.waitFor(/Mailyard send started/, 60_000);
});

afterAll(async () => {
  if (service && service.child.exitCode === null) {
    service.child.kill('SIGTERM');
    await service.exited;
  }
  await receiver?.close();
  await closeContext(ctx);
  await stores?.drop();
});

/**
 * Polls /healthz (paced 20 ms apart) until `stop` resolves; counts the 200 answers, and those
 * that came while `stop` was still pending.
 */
async function watchHealthz(stop: Promise<unknown>): Promise<{ answers: number; whilePending: number }> {
  let done = false;
  void stop.finally(() => {
    done = true;
  });
  let answers = 0;
  let whilePending = 0;
  while (!done) {
    const res = await fetch(`http://127.0.0.1:${opsPort}/healthz`, {
      signal: AbortSignal.timeout(60_000),
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    answers++;
    if (!done) whilePending++;
    await new Promise((r) => setTimeout(r, 20));
  }
  return { answers, whilePending };
}

it('keeps /healthz answering while it checks pathological HTML, and every copy reaches its outcome', async () => {
  const tenantId = await newTenant(ctx.db);
  const mailerId = await insertSmtpMailer(ctx.db, ctx.sealer, tenantId, {
    port: receiver.port,
    secure: 'None',
  });
  const send = (to: string, html: string) =>
    acceptSend(ctx.db, tenantId, {
      from: { email: 'sender@example.com' },
      to: [{ email: to }],
      mailer_id: mailerId,
      subject: 'Hello',
      content: [{ type: 'text/html', value: html }],
    });
  const bodies = {
    // One link whose text is 128 KB of "a.a.a...": not a domain, so the copy is delivered.
    longLinkText: `<a href="https://evil.example.net/">${'a.'.repeat(64 * 1024)}</a>`,
    // 8,000 nested anchors; the innermost text shows a domain its link does not go to.
    nestedAnchors: `${'<a href="https://evil.example.net/">x'.repeat(8000)}<a href="https://evil.example.net/">www.bank.com${'</a>'.repeat(8000)}`,
    // More links than PHISHING_MAX_LINKS: refused as too complex to check.
    tooManyLinks: Array.from({ length: 10_000 }, (_, i) => `<a href="https://s${i}.example/">Read</a>`).join(
      '',
    ),
  };
  const refs = {
    longLinkText: (await send('long@example.com', bodies.longLinkText)).refId,
    nestedAnchors: (await send('nested@example.com', bodies.nestedAnchors)).refId,
    tooManyLinks: (await send('many@example.com', bodies.tooManyLinks)).refId,
  };
  const outcome = (refId: string) =>
    eventually(async () => (await eventsOf(ctx.db, refId))[0] ?? null, `the outcome of ${refId}`, 180_000);
  const outcomes = Promise.all([
    outcome(refs.longLinkText),
    outcome(refs.nestedAnchors),
    outcome(refs.tooManyLinks),
  ]);
  const health = await watchHealthz(outcomes);
  const [longLinkText, nestedAnchors, tooManyLinks] = (await outcomes) as EventRow[];

  expect(longLinkText!.event).toBe('MAIL_DELIVERED');
  expect([nestedAnchors!.event, nestedAnchors!.payload.details.failed_reason]).toEqual([
    'PHISHING',
    'Link text shows www.bank.com but the link goes to evil.example.net',
  ]);
  expect([tooManyLinks!.event, tooManyLinks!.payload.details.failed_reason]).toEqual([
    'PHISHING',
    'Content could not be checked for phishing: more than 9000 links',
  ]);
  // The service answered /healthz while it was still working on the hostile copies.
  expect(health.whilePending).toBeGreaterThan(0);
  expect(service.child.exitCode).toBeNull();
});
