/**
 * OAuth set-up through the gateway's HTTP API for the cross-service OAuth tests
 * (test/oauth-*.test.ts): the stand-ins' clients (`g-client`, `m-client`) registered as the
 * tenant's OAuth apps, the tenant's EMAIL_EVENT webhook, a mailer connected the way a user
 * connects one (login -> consent at the stand-in -> callback), and startOAuthStack(): the stores,
 * stand-ins, dispatcher and gateway app the API-driven OAuth tests share (with the Gmail API and
 * Graph stand-ins on request, and contexts of their own for services run as their own processes).
 */
import { buildGatewayApp } from '@mailyard/gateway';
import {
  type Config,
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  openContext,
} from '@mailyard/platform';
import { createTenant } from '@mailyard/store';
import { type GmailStandIn, startGmailApi } from '@mailyard/testkit/peers/gmail-api';
import { type GoogleOAuthStandIn, startGoogleOAuth } from '@mailyard/testkit/peers/google-oauth';
import { type GraphStandIn, startGraphApi } from '@mailyard/testkit/peers/graph-api';
import {
  type MicrosoftIdentityStandIn,
  startMicrosoftIdentity,
} from '@mailyard/testkit/peers/microsoft-identity';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { type SharedStores, createSharedStores } from '@mailyard/testkit/stores';
import { start as startDispatcher } from '@mailyard/webhook-dispatcher';
import request from 'supertest';

export const REDIRECT = 'https://api.example.test/v1/oauth/callback';

const GMAIL_SEND = 'https://www.googleapis.com/auth/gmail.send';

export interface SendApiStandIns {
  gmail: GmailStandIn;
  graph: GraphStandIn;
  /** GMAIL_API_URL and MICROSOFT_GRAPH_URL pointing at them. */
  env: Record<string, string>;
}

/**
 * The Gmail API and Microsoft Graph stand-ins the send service delivers through, accepting
 * exactly the live tokens the identity stand-ins issued for `gmailAccount` (gmail.send) and
 * `outlookAccount` (Mail.Send). For OAuthStackOptions.env.
 */
export async function startSendApiStandIns(
  idp: { google: GoogleOAuthStandIn; microsoft: MicrosoftIdentityStandIn },
  gmailAccount: string,
  outlookAccount: string,
): Promise<SendApiStandIns> {
  const [gmail, graph] = await Promise.all([
    startGmailApi({ email: gmailAccount, bearer: idp.google.auth.bearer(gmailAccount, GMAIL_SEND) }),
    startGraphApi({
      email: outlookAccount,
      bearer: idp.microsoft.auth.bearer(outlookAccount, 'Mail.Send'),
    }),
  ]);
  return { gmail, graph, env: { GMAIL_API_URL: `${gmail.url}/`, MICROSOFT_GRAPH_URL: graph.url } };
}

/** The gateway app and the tenant's API key. */
export interface Caller {
  app: ReturnType<typeof buildGatewayApp>;
  key: string;
}

const bearer = (c: Caller) => ({ Authorization: `Bearer ${c.key}` });

/** Adds the clients to the stand-ins and registers them as the tenant's OAuth apps; their ids. */
export async function registerOAuthApps(
  c: Caller,
  google: GoogleOAuthStandIn,
  microsoft: MicrosoftIdentityStandIn,
): Promise<{ googleApp: string; msApp: string }> {
  google.auth.addClient({ clientId: 'g-client', clientSecret: 'g-secret', redirectUris: [REDIRECT] });
  microsoft.auth.addClient({ clientId: 'm-client', clientSecret: 'm-secret', redirectUris: [REDIRECT] });
  const register = async (provider: string, client: string) =>
    (
      await request(c.app)
        .post('/v1/oauth/apps')
        .set(bearer(c))
        .send({ provider, client_id: `${client}-client`, client_secret: `${client}-secret` })
        .expect(201)
    ).body.app_id as string;
  return { googleApp: await register('google', 'g'), msApp: await register('microsoft', 'm') };
}

/** Registers the tenant's EMAIL_EVENT webhook at `url` for the given event toggles. */
export async function registerEmailEventWebhook(
  c: Caller,
  url: string,
  events: Record<string, boolean>,
): Promise<void> {
  await request(c.app)
    .post('/v1/webhook/register')
    .set(bearer(c))
    .send({ webhook_url: url, event: 'EMAIL_EVENT', method: 'POST', webhook_options: { events } })
    .expect(201);
}

/** Connects a mailer through login -> consent -> callback; returns its id. */
export async function connectMailer(
  c: Caller,
  standIn: GoogleOAuthStandIn | MicrosoftIdentityStandIn,
  account: string,
  body: object,
  expectStatus = 201,
): Promise<string> {
  standIn.auth.account = account;
  const login = await request(c.app).post('/v1/oauth/login').set(bearer(c)).send(body).expect(200);
  const back = await standIn.consent(login.body.url);
  const res = await request(c.app).get(`/v1/oauth/callback${back.search}`).expect(expectStatus);
  return res.body.mailer_id;
}

/** connectMailer for the caller `caller()` gives at the time of the call (set up in beforeAll). */
export function mailerConnector(
  caller: () => Caller,
): (
  standIn: GoogleOAuthStandIn | MicrosoftIdentityStandIn,
  account: string,
  body: object,
  expectStatus?: number,
) => Promise<string> {
  return (standIn, account, body, expectStatus) =>
    connectMailer(caller(), standIn, account, body, expectStatus);
}

/** What startOAuthStack() runs, for one test file. */
export interface OAuthStack extends Caller {
  stores: SharedStores;
  google: GoogleOAuthStandIn;
  microsoft: MicrosoftIdentityStandIn;
  /** The webhooks' receiver (the tenant's EMAIL_EVENT webhook posts to its `/tenant`). */
  receiver: WebhookReceiver;
  config: Config;
  /** The context of the gateway app and of the webhook dispatcher. */
  ctx: ServiceContext;
  tenantId: string;
  googleApp: string;
  msApp: string;
  /** The Gmail API and Graph stand-ins, when OAuthStackOptions.sendApis asked for them. */
  sendApis?: SendApiStandIns;
  /**
   * A context of its own on `config` (as a service run as its own process has), logging as
   * `label`; closed by close(), before the stack's own (stop its services first).
   */
  openOwnContext(label: string): Promise<ServiceContext>;
  /** Closes the contexts of openOwnContext, stops the dispatcher and closes the context, the stand-ins and the receiver; drops the stores. */
  close(): Promise<void>;
}

export interface OAuthStackOptions {
  /** The tenant's name (and the logger's). */
  tenant: string;
  /** The EMAIL_EVENT webhook's event toggles. */
  events: Record<string, boolean>;
  google?: Parameters<typeof startGoogleOAuth>[0];
  /** Starts the Gmail API and Graph stand-ins for these accounts (startSendApiStandIns), settings included. */
  sendApis?: { gmail: string; outlook: string };
  /** Settings of this file beyond the common ones; may start stand-ins that need the identity ones. */
  env?: (idp: {
    google: GoogleOAuthStandIn;
    microsoft: MicrosoftIdentityStandIn;
  }) => Promise<Record<string, string>>;
}

/**
 * Fresh stores, the Google and Microsoft identity stand-ins, a webhook receiver, the webhook
 * dispatcher and the gateway app on one context, an enterprise tenant with its EMAIL_EVENT webhook
 * at the receiver's `/tenant` and both OAuth apps registered. What started is closed again when a
 * later step fails.
 */
export async function startOAuthStack(opts: OAuthStackOptions): Promise<OAuthStack> {
  const closers: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const c of closers.splice(0).reverse()) await c();
  };
  try {
    const stores = await createSharedStores('servers');
    closers.push(() => stores.drop());
    const [google, microsoft, receiver] = await Promise.all([
      startGoogleOAuth(opts.google),
      startMicrosoftIdentity(),
      startWebhookReceiver(),
    ]);
    closers.push(() => Promise.all([receiver.close(), google.close(), microsoft.close()]));
    const sendApis = opts.sendApis
      ? await startSendApiStandIns({ google, microsoft }, opts.sendApis.gmail, opts.sendApis.outlook)
      : undefined;
    if (sendApis) closers.push(() => Promise.all([sendApis.gmail.close(), sendApis.graph.close()]));
    const config = configFrom({
      ...stores.env,
      LOG_LEVEL: 'error',
      API_KEY_CACHE_MS: '0',
      WEBHOOK_ALLOW_INSECURE: '1',
      WEBHOOK_BATCH_WAIT_MS: '50',
      WEBHOOK_POLL_MS: '100',
      GOOGLE_OAUTH_URL: google.url,
      MICROSOFT_LOGIN_URL: microsoft.url,
      OAUTH_REDIRECT_URI: REDIRECT,
      ...sendApis?.env,
      ...(await opts.env?.({ google, microsoft })),
    });
    const ctx = await openContext(
      config,
      createLogger(`${opts.tenant}-test`, process.env.TEST_LOG_LEVEL ?? 'error'),
    );
    closers.push(() => closeContext(ctx));
    const dispatcher = await startDispatcher(ctx);
    closers.push(() => dispatcher.stop());
    const app = buildGatewayApp(ctx);
    const t = await createTenant(ctx.db, { name: opts.tenant, tier: 'enterprise' });
    const caller = { app, key: t.apiKey };
    await registerEmailEventWebhook(caller, receiver.url('/tenant'), opts.events);
    const apps = await registerOAuthApps(caller, google, microsoft);
    const openOwnContext = async (label: string) => {
      const own = await openContext(config, createLogger(label, process.env.TEST_LOG_LEVEL ?? 'error'));
      closers.push(() => closeContext(own));
      return own;
    };
    return {
      ...caller,
      ...apps,
      stores,
      google,
      microsoft,
      receiver,
      config,
      ctx,
      tenantId: t.id,
      sendApis,
      openOwnContext,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
