/**
 * Durability of the 250: the MX service runs as its own process, accepts a message (250) and is
 * SIGKILLed before anything was posted (no dispatcher runs yet). After a restart, with the
 * dispatcher running, the message reaches the receiver.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  type RunningService,
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  openContext,
} from '@mailyard/platform';
import { createTenant } from '@mailyard/store';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { type Spawned, freePort, spawnTs } from '@mailyard/testkit/process';
import { type SharedStores, createSharedStores as createStores } from '@mailyard/testkit/stores';
import { eventually } from '@mailyard/testkit/webhooks';
import { start as startDispatcher } from '@mailyard/webhook-dispatcher';

jest.setTimeout(180_000);
const run = promisify(execFile);

let stores: SharedStores;
let receiver: WebhookReceiver;
let ctx: ServiceContext;
let dispatcher: RunningService | undefined;
let mx: Spawned | undefined;

beforeAll(async () => {
  stores = await createStores('servers');
  receiver = await startWebhookReceiver();
  ctx = await openContext(
    configFrom({ ...stores.env, LOG_LEVEL: 'error', WEBHOOK_ALLOW_INSECURE: '1', WEBHOOK_POLL_MS: '100' }),
    createLogger('inbound-kill', 'error'),
  );
});

afterAll(async () => {
  mx?.child.kill('SIGKILL');
  await dispatcher?.stop();
  if (ctx) await closeContext(ctx);
  await receiver?.close();
  await stores?.drop();
});

async function startMx(port: number): Promise<Spawned> {
  const s = spawnTs('services/inbound-smtp/src/main.ts', {
    ...stores.env,
    SMTP_PORT: String(port),
    HOST: '127.0.0.1',
    OPS_PORT: String(await freePort()),
    DNS_SERVERS: '127.0.0.1:1',
    DNS_TIMEOUT_MS: '200',
    LOG_LEVEL: 'warn',
  });
  await s.waitFor(/inbound SMTP smtp:\/\//, 60_000);
  return s;
}

it('posts a message accepted before a SIGKILL once the service is back', async () => {
  const t = await createTenant(ctx.db, { name: 'kill', tier: 'enterprise' });
  await ctx.db.query(
    `INSERT INTO inbound_domains (tenant_id, domain, url, method, wildcard) VALUES ($1, 'kill.example.com', $2, 'POST', true)`,
    [t.id, receiver.url('/kill')],
  );
  const port = await freePort();
  mx = await startMx(port);
  const r = await run('swaks', [
    '--server',
    '127.0.0.1',
    '--port',
    String(port),
    '--to',
    'x@kill.example.com',
    '--from',
    'a@example.org',
    '--header',
    'Subject: survives',
  ]);
  expect(r.stdout).toMatch(/<- {2}250 2\.0\.0 Ok: queued as inmsg_/);
  mx.child.kill('SIGKILL');
  await mx.exited;
  expect(receiver.to('/kill')).toHaveLength(0);

  mx = await startMx(port);
  dispatcher = await startDispatcher(ctx);
  const posted = await eventually(() => receiver.to('/kill')[0], 'the post after restart', 60_000);
  expect(posted.json).toMatchObject({
    event: 'INCOMING_EMAIL',
    success: true,
    details: { subject: 'survives', recipient: 'x@kill.example.com', 'mailer-service': 'smtp' },
  });
  const { rows } = await ctx.db.query<{ status: string }>('SELECT status FROM inbound_messages');
  expect(rows).toEqual([{ status: 'processed' }]);
});
