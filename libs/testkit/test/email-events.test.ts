/**
 * The email-event collector the tests tap the bus with, on a real RabbitMQ vhost: it reads both
 * `email.event` versions and counts a message delivered twice once. (It read version 1 only; a
 * group commit of two copies published one version-2 message, the collector threw on it and
 * send-smtp's delivery test timed out in CI, only under load.)
 */
import {
  EMAIL_EVENT_MESSAGE,
  EMAIL_EVENT_MESSAGE_VERSION,
  Exchange,
  RoutingKey,
  ulid,
} from '@mailyard/contracts';
import {
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  envelope,
  openContext,
} from '@mailyard/platform';
import { type EmailEventCollector, collectEmailEvents } from '../email-events';
import { eventually } from '../eventually';
import { type Stores, createStores } from '../stores';
import { at, emailEvent, publishEmailEvent, publishEmailEventGroup } from '../webhooks';

let stores: Stores;
let ctx: ServiceContext;
let collector: EmailEventCollector;

beforeAll(async () => {
  stores = await createStores();
  ctx = await openContext(
    configFrom({ LOG_LEVEL: 'error', ...stores.env }),
    createLogger('collector', 'error'),
  );
  collector = await collectEmailEvents(ctx.bus, `test.collector.${ulid()}`);
});

afterAll(async () => {
  await collector?.cancel();
  if (ctx) await closeContext(ctx);
  await stores?.drop();
});

it('collects version 1 and version-2 groups, each event once even when its message arrives twice', async () => {
  const tenantId = ulid();
  const trace = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  await publishEmailEvent(ctx.bus, tenantId, emailEvent('MAIL_DELIVERED', at(1)), trace);
  await publishEmailEventGroup(ctx.bus, tenantId, [
    emailEvent('MAIL_DELIVERED', at(2)),
    emailEvent('MAIL_DELIVERED', at(3)),
  ]);
  // At-least-once: the same message (same envelope id) published twice, e.g. by a relay that
  // lost the broker's confirm.
  const twice = envelope(EMAIL_EVENT_MESSAGE, emailEvent('MAIL_BOUNCE', at(4)), {
    version: EMAIL_EVENT_MESSAGE_VERSION,
    tenantId,
  });
  await ctx.bus.publish(Exchange.events, RoutingKey.emailEvent('MAIL_BOUNCE'), twice);
  await ctx.bus.publish(Exchange.events, RoutingKey.emailEvent('MAIL_BOUNCE'), twice);
  const end = emailEvent('MAIL_OPENED', at(5));
  await publishEmailEvent(ctx.bus, tenantId, end);

  // The queue delivers in order: once the last one is in, every earlier one is.
  await eventually(() => collector.events().some((e) => e.event === 'MAIL_OPENED'), 'the last event');
  expect(
    collector
      .events()
      .map((e) => e.details.event_at)
      .sort(),
  ).toEqual([at(1), at(2), at(3), at(4), at(5)]);
  const first = collector.items().find((i) => i.event.details.event_at === at(1));
  expect(first?.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-/);
});

it('an invalid email.event message makes events() throw with the reason', async () => {
  await ctx.bus.publish(
    Exchange.events,
    RoutingKey.emailEvent('MAIL_DELIVERED'),
    envelope(EMAIL_EVENT_MESSAGE, { events: [] }, { version: 2, tenantId: ulid() }),
  );
  await eventually(() => collector.invalid.length > 0, 'the invalid message refused');
  expect(() => collector.events()).toThrow(/invalid email\.event message/);
});
