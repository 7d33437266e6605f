/**
 * The MX service on the real servers for the cross-service inbound tests (test/inbound-*.test.ts):
 * fresh stores, one tenant whose verified sending domains are configured for inbound mail and
 * routed to a webhook receiver (`/hook/<domain>`), the webhook dispatcher and the inbound service
 * started in this process (`WEBHOOK_ALLOW_INSECURE=1` for the local receiver), and swaks.
 */
import type { IncomingEmailPayload } from '@mailyard/contracts';
import { start } from '@mailyard/inbound-smtp';
import {
  type RunningService,
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  openContext,
} from '@mailyard/platform';
import { type InboundDomainFixture, insertInboundDomain, newTenant } from '@mailyard/testkit/fixtures';
import { swaks } from '@mailyard/testkit/peers/swaks';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { freePort } from '@mailyard/testkit/process';
import { type SharedStores, createSharedStores } from '@mailyard/testkit/stores';
import { start as startDispatcher } from '@mailyard/webhook-dispatcher';

export interface InboundHarness {
  ctx: ServiceContext;
  receiver: WebhookReceiver;
  /** The inbound service's SMTP port on 127.0.0.1. */
  port: number;
  tenantId: string;
  /** Mailer id of each configured domain (the events' `mailer-id`). */
  mailerIds: Record<string, string>;
  swaks(args: string[]): Promise<string>;
  /** INCOMING_EMAIL payloads posted so far for `domain`, one per delivery (a retried attempt once). */
  posted(domain: string): IncomingEmailPayload[];
  /** Message bytes the MX sessions hold now and the most they ever held at once (its own count). */
  held(): { bytes: number; peak: number };
  stop(): Promise<void>;
}

export async function startInbound(opts: {
  domains: Array<Omit<InboundDomainFixture, 'url'>>;
  env?: Record<string, string>;
}): Promise<InboundHarness> {
  const stores: SharedStores = await createSharedStores('servers');
  const receiver = await startWebhookReceiver();
  const port = await freePort();
  const env = {
    ...stores.env,
    LOG_LEVEL: 'error',
    SMTP_PORT: String(port),
    HOST: '127.0.0.1',
    WEBHOOK_ALLOW_INSECURE: '1',
    WEBHOOK_POLL_MS: '100',
    // nothing answers here: authentication ends quickly as temperror unless a test gives DNS
    DNS_SERVERS: '127.0.0.1:1',
    DNS_TIMEOUT_MS: '500',
    ...opts.env,
  };
  const ctx = await openContext(configFrom(env), createLogger('inbound-test', 'error'));
  const services: RunningService[] = [];
  const stop = async () => {
    for (const s of services.reverse()) await s.stop();
    await closeContext(ctx);
    await receiver.close();
    await stores.drop();
  };
  try {
    const tenantId = await newTenant(ctx.db);
    const mailerIds: Record<string, string> = {};
    for (const d of opts.domains)
      mailerIds[d.domain] = await insertInboundDomain(ctx.db, ctx.sealer, tenantId, {
        ...d,
        url: receiver.url(`/hook/${d.domain}`),
      });
    services.push(await startDispatcher(ctx));
    const mx = await start(ctx);
    services.push(mx);
    return {
      ctx,
      receiver,
      port,
      tenantId,
      mailerIds,
      swaks: (args) => swaks(port, args),
      posted: (domain) => receiver.deliveries(`/hook/${domain}`).map((r) => r.json as IncomingEmailPayload),
      held: () => mx.held(),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
