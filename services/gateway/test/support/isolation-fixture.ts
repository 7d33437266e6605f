/**
 * The resources of the tenant isolation table (tenant-isolation.test.ts): tenant A owns one of
 * every kind a /v1 route can name, made through the API as a client would (the exceptions say
 * why); tenant B owns the few its probes need to get past their own checks (an IMAP mailer to
 * ask for A's job, a sending mailer to send with A's template, an OAuth app to log in with A's
 * mailer), so each probe fails only on tenancy.
 */
import { insertDeliveries } from '@mailyard/store';
import type { GoogleOAuthStandIn } from '@mailyard/testkit/peers/google-oauth';
import type { WebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import request from 'supertest';
import type { SuiteGateway } from './harness';

export const ISOLATION_REDIRECT = 'https://api.example.test/v1/oauth/callback';
export const ISOLATION_CLIENTS = { a: 'isolation-client-a', b: 'isolation-client-b' } as const;

/** What tenant A owns: ids, names and addresses another tenant must not reach. */
export interface TenantA {
  template: string;
  domain: string;
  domainMailer: string;
  smtpMailer: string;
  imapMailer: string;
  sparkPostMailer: string;
  oauthApp: string;
  oauthClientId: string;
  oauthMailer: string;
  webhook: string;
  delivery: string;
  /** Incoming domain (the verified sending domain above) and one of its addresses. */
  username: string;
  job: string;
  suppressed: string;
  refId: string;
  recipient: string;
  campaign: string;
  /** The id of A's API key. */
  apiKeyId: string;
}

export interface TenantB {
  /** A URL B's webhooks may point at (the test's receiver). */
  hookUrl: string;
  imapMailer: string;
  domainMailer: string;
  domain: string;
  oauthApp: string;
}

export interface Fixture {
  a: TenantA;
  b: TenantB;
}

type Peers = { receiver: WebhookReceiver; google: GoogleOAuthStandIn };

/** Registers both apps' clients at the Google stand-in (before the gateway starts). */
export function addIsolationClients(google: GoogleOAuthStandIn): void {
  for (const clientId of Object.values(ISOLATION_CLIENTS))
    google.auth.addClient({
      clientId,
      clientSecret: `${clientId}-secret`,
      redirectUris: [ISOLATION_REDIRECT],
    });
}

const created = async (res: request.Response, field: string): Promise<string> => {
  if (res.status >= 300 || typeof res.body?.[field] !== 'string')
    throw new Error(`fixture: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body[field];
};

/** A sending domain added through the API; verified in the table (DNS is not what is tested). */
async function verifiedDomain(gw: SuiteGateway, key: string, tenantId: string, name: string) {
  const res = await gw.post('/v1/domain/add', { domain: name }, key);
  if (res.status !== 201) throw new Error(`fixture: domain ${res.status} ${JSON.stringify(res.body)}`);
  await gw.ctx.db.query(
    'UPDATE domains SET verified = true, verified_at = now() WHERE tenant_id = $1 AND name = $2',
    [tenantId, name],
  );
  return res.body.data.mailer_id as string;
}

const imapBody = (receiver: WebhookReceiver, name: string) => ({
  name,
  email: `${name}@example.test`,
  config: { host: '127.0.0.1', port: 993, username: name, password: 'pw' },
  webhook: { url: receiver.url(`/${name}`), method: 'POST' },
});

/** The tenant webhook of email events (delivery events on). */
export const webhookBody = (url: string) => ({
  event: 'EMAIL_EVENT',
  webhook_url: url,
  method: 'POST',
  webhook_options: { events: { delivery: true } },
});

const oauthAppBody = (clientId: string) => ({
  provider: 'google',
  client_id: clientId,
  client_secret: `${clientId}-secret`,
  redirect_uri: ISOLATION_REDIRECT,
});

export async function buildFixture(gw: SuiteGateway, { receiver, google }: Peers): Promise<Fixture> {
  const A = gw.key;
  const B = gw.otherKey;
  const domain = 'isolated-a.example';
  const domainMailer = await verifiedDomain(gw, A, gw.tenantId, domain);
  const template = await created(
    await gw.post(
      '/v1/email/template',
      { name: 'A only', subject: 'Hi', content: [{ type: 'text/plain', value: 'Hello' }] },
      A,
    ),
    'template_id',
  );
  const smtpMailer = await created(
    await gw.post(
      '/v1/mailer/smtp',
      {
        name: 'a-smtp',
        email: 'a@example.test',
        config: { host: '127.0.0.1', port: 2525, username: 'a', password: 'pw', secure: 'None' },
      },
      A,
    ),
    'mailer_id',
  );
  const imapMailer = await created(
    await gw.post('/v1/mailer/imap', imapBody(receiver, 'a-imap'), A),
    'mailer_id',
  );
  const sparkPostMailer = await created(
    await gw.post(
      '/v1/mailer/sparkpost',
      { name: 'a-sparkpost', email: 'a@example.test', config: { api_key: 'a-sparkpost-key' } },
      A,
    ),
    'mailer_id',
  );
  const oauthApp = await created(
    await gw.post('/v1/oauth/apps', oauthAppBody(ISOLATION_CLIENTS.a), A),
    'app_id',
  );
  // An OAuth mailer as a user connects one: login, consent at the provider, callback.
  google.auth.account = 'isolated-a@gmail.test';
  const login = await gw.post('/v1/oauth/login', { app_id: oauthApp, type: 'smtp' }, A);
  const back = await google.consent(await created(login, 'url'));
  const oauthMailer = await created(
    await request(gw.app).get(`/v1/oauth/callback${back.search}`),
    'mailer_id',
  );
  const webhook = await created(
    await gw.post('/v1/webhook/register', webhookBody(receiver.url('/a-events')), A),
    'webhook_id',
  );
  // Deliveries are written by the dispatcher's fan-out, not through the API: the same store call.
  const [delivery] = await insertDeliveries(gw.ctx.db, [
    {
      tenantId: gw.tenantId,
      targetKind: 'webhook',
      webhookId: webhook,
      eventTypes: ['MAIL_DELIVERED'],
      body: '{}',
    },
  ]);
  await gw
    .post('/v1/inbound/relay_webhook', { domain, url: receiver.url('/a-inbound'), method: 'POST' }, A)
    .expect(200);
  const username = 'isolated-a-desk';
  await gw.post('/v1/inbound/username', { user_name: username, domain }, A).expect(200);
  const job = await created(await gw.post(`/v1/imap/${imapMailer}/history`, { count: 10 }, A), 'jobId');
  const suppressed = 'kept-suppressed@example.org';
  await gw.post('/v1/email/unsubscribe', { email: suppressed }, A).expect(200);
  const recipient = 'only-a-sees-this@example.org';
  const campaign = 'isolated-a-campaign';
  const refId = await created(
    await gw.post(
      '/v1/email/send',
      {
        from: { email: `news@${domain}` },
        to: [{ email: recipient }],
        mailer_id: domainMailer,
        template_id: template,
        campaign_id: campaign,
      },
      A,
    ),
    'ref_id',
  );

  const bDomain = 'isolated-b.example';
  const b: TenantB = {
    hookUrl: receiver.url('/b-hooks'),
    domain: bDomain,
    domainMailer: await verifiedDomain(gw, B, gw.otherTenantId, bDomain),
    imapMailer: await created(await gw.post('/v1/mailer/imap', imapBody(receiver, 'b-imap'), B), 'mailer_id'),
    oauthApp: await created(await gw.post('/v1/oauth/apps', oauthAppBody(ISOLATION_CLIENTS.b), B), 'app_id'),
  };
  return {
    a: {
      template,
      domain,
      domainMailer,
      smtpMailer,
      imapMailer,
      sparkPostMailer,
      oauthApp,
      oauthClientId: ISOLATION_CLIENTS.a,
      oauthMailer,
      webhook,
      delivery: delivery!,
      username,
      job,
      suppressed,
      refId,
      recipient,
      campaign,
      apiKeyId: (
        await gw.ctx.db.query<{ id: string }>('SELECT id FROM api_keys WHERE tenant_id = $1 LIMIT 1', [
          gw.tenantId,
        ])
      ).rows[0]!.id,
    },
    b,
  };
}
