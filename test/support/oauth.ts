/**
 * OAuth set-up through the gateway's HTTP API for the cross-service OAuth tests
 * (test/oauth-*.test.ts): the stand-ins' clients (`g-client`, `m-client`) registered as the
 * tenant's OAuth apps, the tenant's EMAIL_EVENT webhook, and a mailer connected the way a user
 * connects one (login -> consent at the stand-in -> callback).
 */
import type { buildGatewayApp } from '@mailyard/gateway';
import type { GoogleOAuthStandIn } from '@mailyard/testkit/peers/google-oauth';
import type { MicrosoftIdentityStandIn } from '@mailyard/testkit/peers/microsoft-identity';
import request from 'supertest';

export const REDIRECT = 'https://api.example.test/v1/oauth/callback';

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
