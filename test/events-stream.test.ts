/**
 * GET /v1/events/stream across services on the real servers: the send service delivers through
 * Postfix's smtp-sink and records MAIL_DELIVERED; a gateway with its OWN service context (its
 * own RabbitMQ connection, as a separate process would have) streams it to the sending tenant
 * only. Also: filters, 401/400/429, Last-Event-ID resume, a client that stops reading is dropped
 * while another keeps receiving, `pnpm cli tail` printing a delivery, and the in-process bus
 * (embedded mode) with the wire format: headers for proxies, heartbeat comments.
 */
import type { Server } from 'node:http';
import { connect } from 'node:net';
import { Mailyard, type StreamedEvent } from '@mailyard/client';
import {
  EMAIL_EVENT_GROUP_VERSION,
  EMAIL_EVENT_MESSAGE,
  EMAIL_EVENT_MESSAGE_VERSION,
  type EmailEvent,
  Exchange,
  RoutingKey,
  recipientEvent,
} from '@mailyard/contracts';
import { type EventHub, buildGatewayApp, createEventHub } from '@mailyard/gateway';
import {
  type Bus,
  type ServiceContext,
  boundPort,
  closeContext,
  closeServer,
  configFrom,
  createLogger,
  envelope,
  listen,
  metricsRegistry,
  openContext,
} from '@mailyard/platform';
import { createTenant, issueKey } from '@mailyard/store';
import { eventually } from '@mailyard/testkit/eventually';
import { dkimKeyPair, insertDomainMailer } from '@mailyard/testkit/fixtures';
import { spawnTs } from '@mailyard/testkit/process';
import { createSharedStores } from '@mailyard/testkit/stores';
import { type SendStack, startSendStack } from './support/send-stack';

jest.setTimeout(180_000);

/** A gateway on its own context and port, as its own process would run it. */
interface Gateway {
  url: string;
  hub: EventHub;
  ctx: ServiceContext;
  stop(): Promise<void>;
}

async function startGateway(ctx: ServiceContext, ownContext: boolean): Promise<Gateway> {
  const gwCtx = ownContext ? await openContext(ctx.config, createLogger('events-stream-gw', 'error')) : ctx;
  const hub = createEventHub(gwCtx);
  const server: Server = await listen(buildGatewayApp(gwCtx, {}, { eventHub: hub }), 0, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${boundPort(server)}`,
    hub,
    ctx: gwCtx,
    async stop() {
      const closing = closeServer(server);
      await hub.close();
      await closing;
      if (ownContext) await closeContext(gwCtx);
    },
  };
}

/** Reads a stream in the background, keeping what came. */
function collect(client: Mailyard, filters: Parameters<Mailyard['events']['stream']>[0] = {}) {
  const abort = new AbortController();
  const got: StreamedEvent[] = [];
  let failure: unknown;
  const done = (async () => {
    try {
      for await (const e of client.events.stream({ ...filters, signal: abort.signal })) got.push(e);
    } catch (err) {
      failure = err;
    }
  })();
  return {
    got,
    refs: () => got.map((e) => `${e.event.event}:${e.event.details.ref_id}`),
    failure: () => failure,
    async stop() {
      abort.abort();
      await done;
    },
  };
}

const counterValue = async (name: string): Promise<number> => {
  const m = await metricsRegistry.getSingleMetric(name)?.get();
  return (m?.values ?? []).reduce((sum, v) => sum + v.value, 0);
};

/** Publishes `events` of `tenantId` as one email.event message (a group when more than one). */
function publishEvents(bus: Bus, tenantId: string, events: EmailEvent[]) {
  const type = events[0]!.event;
  const env =
    events.length === 1
      ? envelope(EMAIL_EVENT_MESSAGE, events[0], { tenantId, version: EMAIL_EVENT_MESSAGE_VERSION })
      : envelope(
          EMAIL_EVENT_MESSAGE,
          { events: events.map((event) => ({ event })) },
          {
            tenantId,
            version: EMAIL_EVENT_GROUP_VERSION,
          },
        );
  return bus.publish(Exchange.events, RoutingKey.emailEvent(type), env);
}

const eventFor = (type: 'MAIL_DELIVERED' | 'MAIL_BOUNCE', refId: string, email = 'r@example.com') =>
  recipientEvent(type, { refId, mailerId: 'm', email, customArgs: null, messageId: '', threadId: '' });

describe('event stream on the real servers (services in their own contexts)', () => {
  let stack: SendStack;
  let gw: Gateway;

  beforeAll(async () => {
    stack = await startSendStack('events-stream-test', {
      EVENTS_STREAM_CLIENT_BUFFER: '64kb',
      EVENTS_STREAM_MAX_PER_TENANT: '4',
    });
    gw = await startGateway(stack.ctx, true);
  });

  afterAll(async () => {
    await gw?.stop();
    await stack?.stop();
  });

  async function tenantWithMailer(name: string) {
    const tenant = await createTenant(stack.ctx.db, { name, tier: 'enterprise' });
    const domain = `${name}.test`;
    const mailerId = await insertDomainMailer(stack.ctx.db, stack.ctx.sealer, tenant.id, {
      domain,
      selector: 's',
      key: dkimKeyPair(),
    });
    const client = new Mailyard({ apiKey: tenant.apiKey, basePath: gw.url });
    const send = async (to: string) =>
      (
        await client.emails.send({
          from: { email: `hi@${domain}` },
          to: [{ email: to }],
          mailer_id: mailerId,
          subject: 'Live',
          content: [{ type: 'text/plain', value: 'hello' }],
        })
      ).ref_id;
    return { tenant, client, send };
  }

  it('streams MAIL_DELIVERED of a real send to its tenant and nothing of another tenant', async () => {
    const a = await tenantWithMailer('stream-a');
    const b = await tenantWithMailer('stream-b');
    const streamA = collect(a.client);
    const streamB = collect(b.client);
    try {
      await eventually(() => gw.hub.connected === 2, 'both streams connected');
      const refA = await a.send('reader@example.com');
      const refB = await b.send('other@example.com');
      const deliveredA = await eventually(
        () => streamA.got.find((e) => e.event.event === 'MAIL_DELIVERED' && e.event.details.ref_id === refA),
        "A's delivery on A's stream",
      );
      expect(deliveredA.id).toMatch(/^[0-9A-Z]{26}\.\d+$/);
      expect(deliveredA.event.details.email).toEqual(['reader@example.com']);
      await eventually(() => streamB.refs().includes(`MAIL_DELIVERED:${refB}`), "B's delivery on B's stream");
      // The hub wrote B's event to every stream before this second A event: once that arrives on
      // A's stream, anything of B written to it would have arrived too.
      const refA2 = await a.send('second@example.com');
      await eventually(() => streamA.refs().includes(`MAIL_DELIVERED:${refA2}`), "A's second delivery");
      expect(streamA.got.every((e) => e.event.details.ref_id !== refB)).toBe(true);
      expect(streamB.got.every((e) => e.event.details.ref_id === refB)).toBe(true);
      expect(await counterValue('mailyard_event_stream_events_sent_total')).toBeGreaterThanOrEqual(3);
    } finally {
      await streamA.stop();
      await streamB.stop();
    }
  });

  it('applies the filters (read-only key) and answers 401 without a key, 400 for a bad filter, 429 past the tenant cap', async () => {
    const t = await createTenant(stack.ctx.db, { name: 'filters', tier: 'enterprise' });
    // A read-only key is enough for the stream.
    const readKey = (await issueKey(stack.ctx.db, t.id, { scope: 'read' }))!.apiKey;
    const client = new Mailyard({ apiKey: readKey, basePath: gw.url });
    const noKey = await fetch(`${gw.url}/v1/events/stream`);
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toEqual({ success: false, error: 'Invalid or missing API key' });
    const bad = await fetch(`${gw.url}/v1/events/stream?event=MAIL_DELIVERED,NOPE`, {
      headers: { 'X-API-Key': t.apiKey },
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      success: false,
      error: expect.stringMatching(/^event must be/),
    });

    const all = collect(client);
    const bounces = collect(client, { filters: { event: ['MAIL_BOUNCE'] } });
    const oneRef = collect(client, { filters: { refId: 'REF-2' } });
    const oneAddress = collect(client, { filters: { email: 'X@Example.com' } });
    try {
      await eventually(() => gw.hub.connected === 4, 'four streams connected');
      const over = await fetch(`${gw.url}/v1/events/stream`, {
        headers: { Authorization: `Bearer ${t.apiKey}` },
      });
      expect(over.status).toBe(429);
      expect(await over.json()).toMatchObject({ success: false, error: expect.stringMatching(/at most 4/) });

      await publishEvents(stack.ctx.bus, t.id, [eventFor('MAIL_DELIVERED', 'REF-1')]);
      await publishEvents(stack.ctx.bus, t.id, [
        eventFor('MAIL_BOUNCE', 'REF-2'),
        eventFor('MAIL_BOUNCE', 'REF-3', 'x@example.com'),
      ]);
      await publishEvents(stack.ctx.bus, t.id, [eventFor('MAIL_DELIVERED', 'END')]);
      await eventually(() => all.refs().includes('MAIL_DELIVERED:END'), 'the end marker');
      expect(all.refs()).toEqual([
        'MAIL_DELIVERED:REF-1',
        'MAIL_BOUNCE:REF-2',
        'MAIL_BOUNCE:REF-3',
        'MAIL_DELIVERED:END',
      ]);
      await eventually(
        () => bounces.got.length === 2 && oneRef.got.length === 1 && oneAddress.got.length === 1,
        'filtered streams',
      );
      expect(bounces.refs()).toEqual(['MAIL_BOUNCE:REF-2', 'MAIL_BOUNCE:REF-3']);
      expect(oneRef.refs()).toEqual(['MAIL_BOUNCE:REF-2']);
      expect(oneAddress.refs()).toEqual(['MAIL_BOUNCE:REF-3']);

      // Resume: after REF-1, the ring replays what followed for this tenant.
      const resumed = collect(client, { lastEventId: all.got[0]!.id });
      try {
        await all.stop();
        await eventually(() => resumed.got.length === 3, 'the replayed events');
        expect(resumed.refs()).toEqual(['MAIL_BOUNCE:REF-2', 'MAIL_BOUNCE:REF-3', 'MAIL_DELIVERED:END']);
      } finally {
        await resumed.stop();
      }
    } finally {
      for (const s of [all, bounces, oneRef, oneAddress]) await s.stop();
    }
  });

  it('drops a client that stops reading while another client keeps receiving everything', async () => {
    const t = await createTenant(stack.ctx.db, { name: 'slow', tier: 'enterprise' });
    const fast = collect(new Mailyard({ apiKey: t.apiKey, basePath: gw.url }));
    // The slow client: sends the request, then never reads a byte.
    const { port } = new URL(gw.url);
    const slow = connect(Number(port), '127.0.0.1');
    slow.on('error', () => {});
    slow.write(`GET /v1/events/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.apiKey}\r\n\r\n`);
    slow.pause();
    const droppedBefore = await counterValue('mailyard_event_stream_clients_dropped_total');
    try {
      await eventually(() => gw.hub.connected === 2, 'both clients connected');
      let published = 0;
      // Publish groups of 100 events until the gateway gives up on the slow client (its socket
      // buffers fill first, then its 64 KiB response buffer).
      await eventually(
        async () => {
          if ((await counterValue('mailyard_event_stream_clients_dropped_total')) > droppedBefore)
            return true;
          const refs = Array.from({ length: 100 }, (_, i) => `BULK-${published + i}`);
          await publishEvents(
            stack.ctx.bus,
            t.id,
            refs.map((r) => eventFor('MAIL_DELIVERED', r)),
          );
          published += refs.length;
          return false;
        },
        'the slow client dropped',
        120_000,
      );
      await eventually(() => gw.hub.connected === 1, 'only the fast client left');
      await publishEvents(stack.ctx.bus, t.id, [eventFor('MAIL_BOUNCE', 'END')]);
      await eventually(
        () => fast.refs().includes('MAIL_BOUNCE:END'),
        'the end marker on the fast client',
        120_000,
      );
      expect(fast.got.length).toBe(published + 1);
      expect(fast.failure()).toBeUndefined();
    } finally {
      slow.destroy();
      await fast.stop();
    }
  });

  it('`pnpm cli tail` prints a delivery and exits 0 on Ctrl-C', async () => {
    const a = await tenantWithMailer('tail');
    const cli = spawnTs('scripts/cli.ts', { MAILYARD_API_KEY: a.tenant.apiKey }, [
      'tail',
      '--url',
      gw.url,
      '--event',
      'MAIL_DELIVERED',
    ]);
    try {
      await cli.waitFor(/tail: connecting/, 60_000);
      await eventually(() => gw.hub.connected === 1, 'the cli connected', 60_000);
      const refId = await a.send('tail@example.com');
      await cli.waitFor(new RegExp(`MAIL_DELIVERED\\s+tail@example\\.com\\s+${refId}`), 60_000);
      const line = cli
        .output()
        .split('\n')
        .find((l) => l.includes(refId));
      expect(line).toMatch(
        new RegExp(`^\\d{4}-\\d{2}-\\d{2}T\\S+Z {2}MAIL_DELIVERED +tail@example\\.com {2}${refId}$`),
      );
      cli.child.kill('SIGINT');
      expect(await cli.exited).toEqual({ code: 0, signal: null });
    } finally {
      cli.child.kill('SIGKILL');
    }
  });
});

describe('event stream on the in-process bus (embedded mode)', () => {
  it('streams what is published on the memory bus to the tenant', async () => {
    const stores = await createSharedStores('embedded');
    const ctx = await openContext(
      configFrom({
        ...stores.env,
        LOG_LEVEL: 'error',
        API_KEY_CACHE_MS: '0',
        EVENTS_STREAM_HEARTBEAT_SECONDS: '1',
      }),
      createLogger('events-embedded', 'error'),
    );
    const gw = await startGateway(ctx, false);
    try {
      expect(ctx.bus.kind).toBe('memory');
      const t = await createTenant(ctx.db, { name: 'embedded', tier: 'standard' });
      const other = await createTenant(ctx.db, { name: 'embedded-other', tier: 'standard' });
      const stream = collect(new Mailyard({ apiKey: t.apiKey, basePath: gw.url }));
      try {
        await eventually(() => gw.hub.connected === 1, 'connected');
        await publishEvents(ctx.bus, other.id, [eventFor('MAIL_DELIVERED', 'OTHER')]);
        await publishEvents(ctx.bus, t.id, [eventFor('MAIL_DELIVERED', 'MINE')]);
        await eventually(() => stream.got.length > 0, 'the event');
        expect(stream.refs()).toEqual(['MAIL_DELIVERED:MINE']);

        // The wire: headers for proxies, then heartbeat comments while nothing happens.
        const abort = new AbortController();
        const raw = await fetch(`${gw.url}/v1/events/stream`, {
          headers: { 'X-API-Key': t.apiKey },
          signal: abort.signal,
        });
        expect(raw.status).toBe(200);
        expect(raw.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
        expect(raw.headers.get('x-accel-buffering')).toBe('no');
        expect(raw.headers.get('cache-control')).toBe('no-cache, no-transform');
        const reader = raw.body!.pipeThrough(new TextDecoderStream()).getReader();
        let text = '';
        while (!text.includes(': heartbeat\n\n')) text += (await reader.read()).value ?? '';
        expect(text.startsWith('retry: 3000\n: connected\n\n')).toBe(true);
        abort.abort();
      } finally {
        await stream.stop();
      }
    } finally {
      await gw.stop();
      await closeContext(ctx);
      await stores.drop();
    }
  });
});
