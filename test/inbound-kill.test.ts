/**
 * Durability of the 250: the MX service runs as its own process (services/inbound-smtp/src/main.ts)
 * and accepts a message; its bus consumer then hangs in the authentication step, because the DNS
 * server it was given receives queries and never answers. While it hangs (the message stored, not
 * yet handed to the dispatcher) the process is SIGKILLed. After a restart (DNS that fails fast this
 * time, the webhook dispatcher running) the message is posted, exactly once.
 */
import { type Socket as UdpSocket, createSocket } from 'node:dgram';
import { connect } from 'node:net';
import {
  type RunningService,
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  openContext,
  traceIdOf,
  traceparentOfUlid,
} from '@mailyard/platform';
import { eventually } from '@mailyard/testkit/eventually';
import { insertInboundDomain, newTenant } from '@mailyard/testkit/fixtures';
import { swaks } from '@mailyard/testkit/peers/swaks';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { type Spawned, freePort, spawnTs } from '@mailyard/testkit/process';
import { type SharedStores, createSharedStores } from '@mailyard/testkit/stores';
import { start as startDispatcher } from '@mailyard/webhook-dispatcher';

jest.setTimeout(180_000);

let stores: SharedStores;
let receiver: WebhookReceiver;
let ctx: ServiceContext;
let dispatcher: RunningService | undefined;
let mx: Spawned | undefined;
let blackhole: UdpSocket;
let queries = 0;

beforeAll(async () => {
  stores = await createSharedStores('servers');
  receiver = await startWebhookReceiver();
  ctx = await openContext(
    configFrom({ ...stores.env, LOG_LEVEL: 'error', WEBHOOK_ALLOW_INSECURE: '1', WEBHOOK_POLL_MS: '100' }),
    createLogger('inbound-kill', 'error'),
  );
  blackhole = createSocket('udp4');
  blackhole.on('message', () => {
    queries++;
  });
  await new Promise<void>((resolve) => blackhole.bind(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  mx?.child.kill('SIGKILL');
  await dispatcher?.stop();
  if (ctx) await closeContext(ctx);
  await receiver?.close();
  await stores?.drop();
  blackhole?.close();
});

async function startMx(port: number, dnsServers: string): Promise<Spawned> {
  const s = spawnTs('services/inbound-smtp/src/main.ts', {
    ...stores.env,
    SMTP_PORT: String(port),
    HOST: '127.0.0.1',
    OPS_PORT: String(await freePort()),
    DNS_SERVERS: dnsServers,
    DNS_TIMEOUT_MS: dnsServers === '127.0.0.1:1' ? '200' : '120000',
    LOG_LEVEL: 'warn',
  });
  await s.waitFor(/inbound SMTP smtp:\/\//, 60_000);
  return s;
}

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });

it('posts a message accepted before a SIGKILL once the service is back, exactly once', async () => {
  const tenantId = await newTenant(ctx.db);
  await insertInboundDomain(ctx.db, ctx.sealer, tenantId, {
    domain: 'kill.example.com',
    url: receiver.url('/kill'),
    wildcard: true,
  });
  const port = await freePort();
  const { port: dnsPort } = blackhole.address();
  mx = await startMx(port, `127.0.0.1:${dnsPort}`);
  const out = await swaks(port, [
    '--to',
    'x@kill.example.com',
    '--from',
    'a@example.org',
    '--header',
    'Subject: survives',
  ]);
  expect(out).toMatch(/<- {2}250 2\.0\.0 Ok: queued as inmsg_/);
  const messageId = /queued as inmsg_([0-9A-Z]{26})/.exec(out)![1]!;

  // the consumer has the message and waits for DNS inside the authentication step
  await eventually(() => queries > 0, 'a DNS query from the authentication step');
  const state = async () => {
    const { rows } = await ctx.db.query<{ status: string; deliveries: number }>(
      'SELECT m.status, (SELECT count(*)::int FROM webhook_deliveries) AS deliveries FROM inbound_messages m',
    );
    return rows;
  };
  expect(await state()).toEqual([{ status: 'stored', deliveries: 0 }]);

  mx.child.kill('SIGKILL');
  expect(await mx.exited).toEqual({ code: null, signal: 'SIGKILL' });
  expect(await refused(port)).toBe(true);
  expect(await state()).toEqual([{ status: 'stored', deliveries: 0 }]);
  expect(receiver.to('/kill')).toHaveLength(0);

  mx = await startMx(port, '127.0.0.1:1');
  dispatcher = await startDispatcher(ctx);
  const posted = await eventually(() => receiver.to('/kill')[0], 'the post after restart', 60_000);
  expect(posted.json).toMatchObject({
    event: 'INCOMING_EMAIL',
    success: true,
    details: { subject: 'survives', recipient: 'x@kill.example.com', 'mailer-service': 'sparkpost' },
  });
  // the restarted process derives the message's trace from its id, as the killed one would have
  expect(traceIdOf(String(posted.headers.traceparent))).toBe(traceIdOf(traceparentOfUlid(messageId)));
  await eventually(async () => (await state())[0]?.status === 'processed', 'the message marked processed');
  expect(await state()).toEqual([{ status: 'processed', deliveries: 1 }]);
  await eventually(async () => {
    const { rows } = await ctx.db.query<{ status: string }>('SELECT status FROM webhook_deliveries');
    return rows.length === 1 && rows[0]!.status === 'delivered';
  }, 'the delivery recorded as delivered');
  expect(receiver.to('/kill')).toHaveLength(1);
});
