/**
 * The OAuth token lifecycle end to end on the real PostgreSQL, RabbitMQ and Redis: mailers
 * connected through the gateway API against the Google and Microsoft stand-ins (TLS, test CA),
 * then the access token source (libs/providers oauthAccessTokens) as the send and IMAP services
 * use it, from two "replicas" (two contexts sharing the stores): refresh ahead of expiry, one
 * refresh for many concurrent callers, a busy provider, and revocation -> the mailer deactivated
 * with MAILER_DEACTIVATED (oauth_revoked) delivered by the webhook dispatcher to the mailer's own
 * webhook (IMAP-capable) or the tenant's EMAIL_EVENT webhook (send-only); re-authentication
 * re-activates it with no event.
 */
import { RoutingKey } from '@mailyard/contracts';
import {
  type Config,
  OutboxRelay,
  type ServiceContext,
  closeContext,
  createLogger,
  openContext,
} from '@mailyard/platform';
import {
  OAuthGrantNotFoundError,
  OAuthRevokedError,
  ProviderThrottledError,
  oauthAccessTokens,
  providerSettings,
} from '@mailyard/providers';
import { loadOAuthGrant, mailers, oauthGrantStore } from '@mailyard/store';
import { eventually } from '@mailyard/testkit/eventually';
import type { GoogleOAuthStandIn } from '@mailyard/testkit/peers/google-oauth';
import type { MicrosoftIdentityStandIn } from '@mailyard/testkit/peers/microsoft-identity';
import type { WebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import request from 'supertest';
import { type OAuthStack, mailerConnector, startOAuthStack } from './support/oauth';

jest.setTimeout(120_000);

let stack: OAuthStack;
let google: GoogleOAuthStandIn;
let microsoft: MicrosoftIdentityStandIn;
let receiver: WebhookReceiver;
let config: Config;
let ctx: ServiceContext;
let replica: ServiceContext;
let relay: OutboxRelay;
let app: OAuthStack['app'];
let key: string;
let tenantId: string;
let googleApp: string;
let msApp: string;

const bearer = () => ({ Authorization: `Bearer ${key}` });

beforeAll(async () => {
  stack = await startOAuthStack({
    tenant: 'oauth-tokens',
    events: { delivery: true },
    env: async () => ({ OAUTH_REFRESH_AHEAD_S: '300' }),
  });
  ({ google, microsoft, receiver, config, ctx, app, key, tenantId, googleApp, msApp } = stack);
  replica = await openContext(
    config,
    createLogger('oauth-tokens-test-replica', process.env.TEST_LOG_LEVEL ?? 'error'),
  );
  // Published rows are kept (marked sent), so outboxDeactivations() counts every event written.
  relay = new OutboxRelay(ctx.db, ctx.bus, ctx.logger, {
    pollMs: 50,
    batchSize: 100,
    retentionMs: 3_600_000,
  });
  relay.start();
});

afterAll(async () => {
  await relay?.stop();
  if (replica) await closeContext(replica);
  await stack?.close();
});

/** Connects a mailer through login -> consent -> callback; returns its id. */
const connect = mailerConnector(() => ({ app, key }));

const tokensOf = (c: ServiceContext) =>
  oauthAccessTokens({
    grants: oauthGrantStore(c.db, c.sealer),
    kv: c.kv,
    logger: c.logger,
    settings: providerSettings(config),
    onOutboxWrite: () => relay.notify(),
  });

const deactivations = (path: string) =>
  receiver
    .to(path)
    .flatMap((r) => (Array.isArray(r.json) ? r.json : [r.json]))
    .filter((e) => (e as { event?: string }).event === 'MAILER_DEACTIVATED') as Array<{
    event: string;
    success: boolean;
    details: Record<string, unknown>;
  }>;

async function outboxDeactivations(): Promise<number> {
  const { rows } = await ctx.db.query<{ n: string }>(
    'SELECT count(*) AS n FROM outbox WHERE routing_key = $1',
    [RoutingKey.mailerDeactivated],
  );
  return Number(rows[0]!.n);
}

describe('access tokens of OAuth mailers', () => {
  it('a token with more than the margin left is used as stored, without a refresh', async () => {
    google.auth.accessTtlSeconds = 3599;
    const id = await connect(google, 'fresh@gmail.test', { app_id: googleApp, type: 'smtp' });
    const stored = await loadOAuthGrant(ctx.db, ctx.sealer, tenantId, id);
    const before = google.auth.count('refresh_token');
    expect(await tokensOf(ctx).forMailer(tenantId, id)()).toBe(stored!.accessToken);
    expect(google.auth.count('refresh_token')).toBe(before);
  });

  it('refreshes ahead of expiry and stores the new token sealed', async () => {
    // The provider issues tokens living 120 s: less than the 300 s margin.
    google.auth.accessTtlSeconds = 120;
    const id = await connect(google, 'ahead@gmail.test', { app_id: googleApp, type: 'smtp_imap' });
    const first = await loadOAuthGrant(ctx.db, ctx.sealer, tenantId, id);
    google.auth.accessTtlSeconds = 3599;
    const before = google.auth.count('refresh_token');
    const source = tokensOf(ctx).forMailer(tenantId, id);
    const token = await source();
    expect(google.auth.count('refresh_token')).toBe(before + 1);
    expect(token).not.toBe(first!.accessToken);
    expect(google.auth.accessTokenInfo(token)).toMatchObject({ email: 'ahead@gmail.test' });
    const stored = await loadOAuthGrant(ctx.db, ctx.sealer, tenantId, id);
    expect(stored!.accessToken).toBe(token);
    expect(stored!.refreshToken).toBe(first!.refreshToken);
    expect(stored!.accessExpiresAt!.getTime()).toBeGreaterThan(Date.now() + 3000_000);
    const { rows } = await ctx.db.query<{ access_token: Uint8Array }>(
      'SELECT access_token FROM oauth_grants WHERE mailer_id = $1',
      [id],
    );
    expect(Buffer.from(rows[0]!.access_token).toString('latin1')).not.toContain(token);
    // Now fresh: the next calls use it.
    expect(await source()).toBe(token);
    expect(google.auth.count('refresh_token')).toBe(before + 1);
  });

  it('asked again naming the token an API refused, refreshes (once for concurrent askers); naming an older token, does not', async () => {
    google.auth.accessTtlSeconds = 3599;
    const id = await connect(google, 'refused@gmail.test', { app_id: googleApp, type: 'smtp' });
    const stored = (await loadOAuthGrant(ctx.db, ctx.sealer, tenantId, id))!.accessToken!;
    const source = tokensOf(ctx).forMailer(tenantId, id);
    const before = google.auth.count('refresh_token');
    // The provider ended the token before its stored expiry; the API client saw a 401 and asks again.
    google.auth.expireAccessTokens('refused@gmail.test');
    const [a, b] = await Promise.all([source({ rejected: stored }), source({ rejected: stored })]);
    expect(a).toBe(b);
    expect(a).not.toBe(stored);
    expect(google.auth.count('refresh_token')).toBe(before + 1);
    expect(google.auth.accessTokenInfo(a)?.email).toBe('refused@gmail.test');
    // A caller that saw the older token refused gets the current one, without another refresh.
    expect(await source({ rejected: stored })).toBe(a);
    expect(await source()).toBe(a);
    expect(google.auth.count('refresh_token')).toBe(before + 1);
  });

  it('many concurrent callers on two replicas: one refresh, one token', async () => {
    const id = await connect(microsoft, 'busy-hands@contoso.test', { app_id: msApp, type: 'smtp_imap' });
    const a = tokensOf(ctx);
    const b = tokensOf(replica);
    await a.invalidate(tenantId, id);
    const before = microsoft.auth.count('refresh_token');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).forMailer(tenantId, id)()),
    );
    expect(microsoft.auth.count('refresh_token')).toBe(before + 1);
    expect(new Set(results).size).toBe(1);
    expect(microsoft.auth.accessTokenInfo(results[0]!)?.email).toBe('busy-hands@contoso.test');
    // The rotated refresh token was stored (Microsoft rotates them).
    const stored = await loadOAuthGrant(ctx.db, ctx.sealer, tenantId, id);
    expect(microsoft.auth.liveRefreshTokens('busy-hands@contoso.test')).toContain(stored!.refreshToken);
  });

  it('a busy provider: a still-valid token is used; an expired one is ProviderThrottledError with Retry-After', async () => {
    const id = await connect(google, 'throttled@gmail.test', { app_id: googleApp, type: 'smtp' });
    const stored = await loadOAuthGrant(ctx.db, ctx.sealer, tenantId, id);
    // Within the margin but not expired.
    await ctx.db.query(
      `UPDATE oauth_grants SET access_expires_at = now() + interval '60 seconds' WHERE mailer_id = $1`,
      [id],
    );
    google.auth.failNext(20, { status: 429, retryAfter: '7' });
    const source = tokensOf(ctx).forMailer(tenantId, id);
    expect(await source()).toBe(stored!.accessToken);
    await tokensOf(ctx).invalidate(tenantId, id);
    const err = await source().catch((e) => e);
    google.auth.failNext(0, { status: 429 });
    expect(err).toBeInstanceOf(ProviderThrottledError);
    expect(err).toMatchObject({ status: 429, retryAfterMs: 7000 });
    expect((await mailers.get(ctx.db, tenantId, id))!.state).toBe('active');
    // The provider is back: the refresh goes through.
    expect(google.auth.accessTokenInfo(await source())?.email).toBe('throttled@gmail.test');
  });

  it('revoked (IMAP-capable): deactivated, MAILER_DEACTIVATED on its own webhook; re-authentication re-activates with no event', async () => {
    const id = await connect(google, 'revoked@gmail.test', { app_id: googleApp, type: 'smtp_imap' });
    await request(app)
      .put('/v1/mailer/imap')
      .set(bearer())
      .send({ mailer_id: id, webhook: { url: receiver.url('/mailer-own'), method: 'POST' } })
      .expect(200);
    const tokens = tokensOf(ctx);
    google.auth.revoke('revoked@gmail.test');
    await tokens.invalidate(tenantId, id);
    const err = await tokens
      .forMailer(tenantId, id)()
      .catch((e) => e);
    expect(err).toBeInstanceOf(OAuthRevokedError);
    const view = await request(app).get(`/v1/mailer/${id}`).set(bearer()).expect(200);
    expect(view.body.data).toMatchObject({ state: 'deactivated', state_reason: 'oauth_revoked' });
    const delivered = await eventually(
      () => deactivations('/mailer-own')[0],
      'MAILER_DEACTIVATED on the mailer webhook',
    );
    expect(receiver.to('/mailer-own')[0]!.json).toEqual({
      event: 'MAILER_DEACTIVATED',
      success: false,
      details: {
        mailer_id: id,
        config_type: 'smtp_imap',
        failed_reason: 'oauth_revoked',
        provider_error: 'invalid_grant: Token has been expired or revoked.',
      },
    });
    expect(delivered.details.mailer_id).toBe(id);
    expect(deactivations('/tenant').filter((e) => e.details.mailer_id === id)).toEqual([]);
    // Deactivated: the source refuses at once, without asking the provider, and sends no second event.
    const calls = google.auth.tokenRequests.length;
    const eventsBefore = await outboxDeactivations();
    await expect(tokens.forMailer(tenantId, id)()).rejects.toBeInstanceOf(OAuthRevokedError);
    expect(google.auth.tokenRequests.length).toBe(calls);
    // Re-authentication: the same mailer, active, no event; tokens work again.
    await connect(google, 'revoked@gmail.test', { app_id: googleApp, mailer_id: id }, 200);
    expect((await mailers.get(ctx.db, tenantId, id))!.state).toBe('active');
    expect(await outboxDeactivations()).toBe(eventsBefore);
    await tokens.invalidate(tenantId, id);
    expect(google.auth.accessTokenInfo(await tokens.forMailer(tenantId, id)())?.email).toBe(
      'revoked@gmail.test',
    );
    expect(deactivations('/mailer-own')).toHaveLength(1);
  });

  it('revoked (send-only): MAILER_DEACTIVATED on the tenant EMAIL_EVENT webhook, as a one-element array', async () => {
    const id = await connect(microsoft, 'sender@contoso.test', { app_id: msApp, type: 'smtp' });
    microsoft.auth.revoke('sender@contoso.test');
    const tokens = tokensOf(replica);
    await tokens.invalidate(tenantId, id);
    await expect(tokens.forMailer(tenantId, id)()).rejects.toBeInstanceOf(OAuthRevokedError);
    await eventually(
      () => deactivations('/tenant').find((e) => e.details.mailer_id === id),
      'MAILER_DEACTIVATED on the tenant webhook',
    );
    const batch = receiver.to('/tenant').find((r) => JSON.stringify(r.json).includes(id))!;
    expect(batch.json).toEqual([
      {
        event: 'MAILER_DEACTIVATED',
        success: false,
        details: {
          mailer_id: id,
          config_type: 'oauth_smtp',
          failed_reason: 'oauth_revoked',
          provider_error: expect.stringMatching(/^invalid_grant: AADSTS70000/),
        },
      },
    ]);
    expect((await mailers.get(ctx.db, tenantId, id))!.stateReason).toBe('oauth_revoked');
  });

  it('a deleted mailer has no grant; its tokens are wiped', async () => {
    const id = await connect(google, 'deleted@gmail.test', { app_id: googleApp, type: 'smtp' });
    await request(app).delete(`/v1/mailer/${id}`).set(bearer()).expect(200);
    await expect(tokensOf(ctx).forMailer(tenantId, id)()).rejects.toBeInstanceOf(OAuthGrantNotFoundError);
    const { rows } = await ctx.db.query('SELECT 1 FROM oauth_grants WHERE mailer_id = $1', [id]);
    expect(rows).toHaveLength(0);
    // Another tenant's id: no grant either.
    await expect(tokensOf(ctx).forMailer('tenant_other', id)()).rejects.toBeInstanceOf(
      OAuthGrantNotFoundError,
    );
  });
});
