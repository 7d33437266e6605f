/**
 * OAuth mailers through the API, against the local stand-ins of Google's and Microsoft's OAuth
 * endpoints (TLS with the test CA; google-auth-library and msal-node make real requests): apps,
 * login -> consent -> callback, login with a refresh token, state checks (forged, expired,
 * replayed), scopes, re-authentication, activation, tenant isolation, tokens sealed at rest.
 * Both modes: PGlite + memory kv, and PostgreSQL + Redis.
 */
import { RoutingKey } from '@mailyard/contracts';
import { StateSigner } from '@mailyard/providers';
import { loadOAuthGrant } from '@mailyard/store';
import { MODES } from '@mailyard/testkit/modes';
import { type GoogleOAuthStandIn, startGoogleOAuth } from '@mailyard/testkit/peers/google-oauth';
import {
  type MicrosoftIdentityStandIn,
  startMicrosoftIdentity,
} from '@mailyard/testkit/peers/microsoft-identity';
import request from 'supertest';
import { outboxRows } from './support/bus-events';
import { type SuiteGateway, useGateway } from './support/harness';

jest.setTimeout(120_000);

const REDIRECT = 'https://api.example.test/v1/oauth/callback';
const ULID = '[0-9A-HJKMNP-TV-Z]{26}';

let google: GoogleOAuthStandIn;
let microsoft: MicrosoftIdentityStandIn;

beforeAll(async () => {
  [google, microsoft] = await Promise.all([startGoogleOAuth(), startMicrosoftIdentity()]);
  google.auth.addClient({
    clientId: 'tenant-google-client',
    clientSecret: 'g-secret-1',
    redirectUris: [REDIRECT],
  });
  google.auth.addClient({
    clientId: 'deploy-google-client',
    clientSecret: 'g-deploy-secret',
    redirectUris: [REDIRECT],
  });
  microsoft.auth.addClient({
    clientId: 'tenant-ms-client',
    clientSecret: 'm-secret-1',
    redirectUris: [REDIRECT],
  });
});
afterAll(async () => {
  await google?.close();
  await microsoft?.close();
});

/** All bytes of the OAuth tables and the mailers, as text (for plaintext checks). */
async function storedBytes(gw: SuiteGateway): Promise<string> {
  const parts: string[] = [];
  for (const table of ['oauth_apps', 'oauth_grants', 'mailers']) {
    const { rows } = await gw.ctx.db.query(`SELECT * FROM ${table}`);
    for (const r of rows)
      for (const v of Object.values(r))
        parts.push(v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : JSON.stringify(v));
  }
  return parts.join('\n');
}

for (const mode of MODES) {
  describe(`OAuth mailers API (${mode})`, () => {
    // Read when the gateway starts (the file's beforeAll has started the stand-ins by then).
    const gw = useGateway(mode, {
      GOOGLE_CLIENT_ID: 'deploy-google-client',
      GOOGLE_CLIENT_SECRET: 'g-deploy-secret',
      OAUTH_REDIRECT_URI: REDIRECT,
      get GOOGLE_OAUTH_URL() {
        return google.url;
      },
      get MICROSOFT_LOGIN_URL() {
        return microsoft.url;
      },
    });
    let googleApp: string;
    let msApp: string;

    beforeAll(async () => {
      googleApp = (
        await gw
          .post('/v1/oauth/apps', {
            provider: 'google',
            client_id: 'tenant-google-client',
            client_secret: 'g-secret-1',
            redirect_uri: REDIRECT,
          })
          .expect(201)
      ).body.app_id;
      msApp = (
        await gw
          .post('/v1/oauth/apps', {
            provider: 'microsoft',
            client_id: 'tenant-ms-client',
            client_secret: 'm-secret-1',
            redirect_uri: REDIRECT,
            directory_tenant: 'Contoso.Test',
          })
          .expect(201)
      ).body.app_id;
    });

    /** POST /v1/oauth/login, the user at the consent page, the browser back at the callback. */
    async function connect(body: object, standIn: GoogleOAuthStandIn | MicrosoftIdentityStandIn = google) {
      const login = await gw.post('/v1/oauth/login', body).expect(200);
      expect(login.body).toEqual({ success: true, url: expect.any(String) });
      const back = await standIn.consent(login.body.url);
      expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
      return { back, res: await request(gw.app).get(`/v1/oauth/callback${back.search}`) };
    }

    it('registers apps with the secret sealed; lists them (and the deployment app) without secrets', async () => {
      expect(googleApp).toMatch(new RegExp(`^oauthapp_${ULID}$`));
      const list = await gw.get('/v1/oauth/apps').expect(200);
      expect(list.body.success).toBe(true);
      expect(list.body.data).toEqual(
        expect.arrayContaining([
          {
            app_id: 'google',
            provider: 'google',
            client_id: 'deploy-google-client',
            redirect_uri: REDIRECT,
            directory_tenant: null,
            source: 'deployment',
            created_at: null,
          },
          expect.objectContaining({
            app_id: msApp,
            provider: 'microsoft',
            directory_tenant: 'contoso.test',
            source: 'tenant',
          }),
          expect.objectContaining({
            app_id: googleApp,
            client_id: 'tenant-google-client',
            redirect_uri: REDIRECT,
          }),
        ]),
      );
      expect(JSON.stringify(list.body)).not.toMatch(/secret-1|deploy-secret/);
      expect(await storedBytes(gw)).not.toMatch(/g-secret-1|m-secret-1/);
      // Another tenant sees none of them.
      const other = await gw.get('/v1/oauth/apps', gw.otherKey).expect(200);
      expect(other.body.data.map((a: { app_id: string }) => a.app_id)).toEqual(['google']);
    });

    it('validates app input', async () => {
      const bad = async (body: object, error: string) =>
        expect((await gw.post('/v1/oauth/apps', body).expect(400)).body).toMatchObject({
          success: false,
          error,
        });
      await bad({ client_id: 'x', client_secret: 'y' }, 'provider must be google or microsoft');
      await bad({ provider: 'google', client_secret: 'y' }, 'client_id is required');
      await bad({ provider: 'google', client_id: 'x' }, 'client_secret is required');
      await bad(
        { provider: 'google', client_id: 'x', client_secret: 'y', redirect_uri: 'javascript:alert(1)' },
        'redirect_uri must be an http(s) URL without a fragment',
      );
      await bad(
        { provider: 'google', client_id: 'x', client_secret: 'y', directory_tenant: 'common' },
        'directory_tenant applies to microsoft apps only',
      );
      await bad(
        { provider: 'microsoft', client_id: 'x', client_secret: 'y', directory_tenant: '../evil' },
        'directory_tenant must be a directory (tenant) id, a verified domain, or common, organizations, consumers',
      );
    });

    it('Google: login -> consent -> callback creates an oauth_smtp_imap_ mailer; tokens sealed at rest', async () => {
      google.auth.account = `owner-${mode}@gmail.test`;
      const { res } = await connect({ app_id: googleApp, type: 'smtp_imap', name: 'Support Gmail' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        success: true,
        mailer_id: expect.stringMatching(new RegExp(`^oauth_smtp_imap_${ULID}$`)),
        message: `OAuth mailer connected for owner-${mode}@gmail.test`,
      });
      const id = res.body.mailer_id;
      const view = await gw.get(`/v1/mailer/${id}`).expect(200);
      expect(view.body.data).toMatchObject({
        mailer_id: id,
        name: 'Support Gmail',
        email: `owner-${mode}@gmail.test`,
        config_type: 'smtp_imap',
        connection_type: 'oauth',
        state: 'active',
        state_reason: null,
        webhook: null,
        config: {
          provider: 'google',
          app_id: googleApp,
          scopes: expect.arrayContaining([
            'https://www.googleapis.com/auth/gmail.send',
            'https://www.googleapis.com/auth/gmail.readonly',
          ]),
          token_expires_at: expect.any(String),
        },
      });
      const list = await gw.get('/v1/mailers').expect(200);
      expect(list.body.data.find((m: { mailer_id: string }) => m.mailer_id === id)?.config.provider).toBe(
        'google',
      );
      // The grant holds what the provider issued, sealed: no token appears in the stored bytes.
      const grant = await loadOAuthGrant(gw.ctx.db, gw.ctx.sealer, gw.tenantId, id);
      const [refresh] = google.auth.liveRefreshTokens(`owner-${mode}@gmail.test`);
      expect(grant).toMatchObject({ provider: 'google', appId: googleApp, refreshToken: refresh });
      expect(google.auth.accessTokenInfo(grant!.accessToken!)?.email).toBe(`owner-${mode}@gmail.test`);
      const bytes = await storedBytes(gw);
      expect(bytes).not.toContain(refresh);
      expect(bytes).not.toContain(grant!.accessToken);
      // The API never shows them either.
      expect(JSON.stringify(view.body)).not.toContain(refresh);
    });

    it('Microsoft: a send-only login creates an oauth_smtp_ mailer through the app directory', async () => {
      microsoft.auth.account = `sender-${mode}@contoso.test`;
      const { res } = await connect({ app_id: msApp, type: 'smtp' }, microsoft);
      expect(res.status).toBe(201);
      expect(res.body.mailer_id).toMatch(new RegExp(`^oauth_smtp_${ULID}$`));
      expect(microsoft.directories.at(-1)).toBe('contoso.test');
      const view = await gw.get(`/v1/mailer/${res.body.mailer_id}`).expect(200);
      expect(view.body.data).toMatchObject({
        name: `sender-${mode}@contoso.test`,
        email: `sender-${mode}@contoso.test`,
        config_type: 'oauth_smtp',
        config: { provider: 'microsoft', app_id: msApp },
      });
      expect(view.body.data).not.toHaveProperty('webhook');
      expect(view.body.data.config.scopes.join(' ')).toMatch(/Mail\.Send/);
    });

    it('the deployment app (app_id google) from the environment', async () => {
      google.auth.account = `deploy-${mode}@gmail.test`;
      const { res } = await connect({ app_id: 'google', type: 'imap' });
      expect(res.status).toBe(201);
      expect(res.body.mailer_id).toMatch(/^oauth_imap_/);
      const grant = await loadOAuthGrant(gw.ctx.db, gw.ctx.sealer, gw.tenantId, res.body.mailer_id);
      expect(grant).toMatchObject({ appId: 'google', provider: 'google' });
      expect(google.auth.accessTokenInfo(grant!.accessToken!)?.clientId).toBe('deploy-google-client');
    });

    it('login with a refresh token exchanges it at once', async () => {
      const email = `token-${mode}@contoso.test`;
      const rt = microsoft.auth.issueRefreshToken('tenant-ms-client', email, [
        'offline_access',
        'openid',
        'email',
        'Mail.Send',
        'Mail.Read',
      ]);
      const before = microsoft.auth.count('refresh_token');
      const res = await gw
        .post('/v1/oauth/login', { app_id: msApp, type: 'smtp_imap', token: rt })
        .expect(201);
      expect(res.body).toEqual({
        success: true,
        mailer_id: expect.stringMatching(/^oauth_smtp_imap_/),
        message: `OAuth mailer connected for ${email}`,
      });
      expect(microsoft.auth.count('refresh_token')).toBe(before + 1);
      const grant = await loadOAuthGrant(gw.ctx.db, gw.ctx.sealer, gw.tenantId, res.body.mailer_id);
      // Microsoft rotated it: the new refresh token is stored, and it works.
      expect(grant!.refreshToken).not.toBe(rt);
      expect(microsoft.auth.liveRefreshTokens(email)).toContain(grant!.refreshToken);
      // A token the provider does not know.
      const bad = await gw.post('/v1/oauth/login', { app_id: msApp, token: 'not-a-token' }).expect(400);
      expect(bad.body).toMatchObject({ success: false, error: 'The provider rejected the refresh token' });
      expect(bad.body.details).toMatch(/^invalid_grant/);
    });

    it('a grant without the scopes the type needs is refused (Google lets users untick them)', async () => {
      google.auth.withheldScopes = ['https://www.googleapis.com/auth/gmail.send'];
      const { res } = await connect({ app_id: googleApp, type: 'smtp_imap' });
      google.auth.withheldScopes = [];
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        success: false,
        error: 'The grant lacks scopes this mailer needs',
        details: 'https://www.googleapis.com/auth/gmail.send',
      });
    });

    it('forged, tampered, expired and replayed states are 400; so is a denied consent', async () => {
      const invalid = { success: false, error: 'Invalid or expired OAuth state' };
      google.auth.account = `replay-${mode}@gmail.test`;
      const { back, res } = await connect({ app_id: googleApp, type: 'smtp' });
      expect(res.status).toBe(201);
      // Replayed: the same code and state again.
      const replay = await request(gw.app).get(`/v1/oauth/callback${back.search}`).expect(400);
      expect(replay.body).toEqual(invalid);
      // Forged states that carry a live login's nonce and code: every other check passes, so only
      // the signature (or the expiry) refuses them; the login's genuine state still connects.
      const own = new StateSigner(gw.ctx.sealer.deriveKey('mailyard oauth state'));
      type Claims = Parameters<StateSigner['sign']>[0];
      const forgeries: Record<string, (state: string, claims: Claims) => string> = {
        // the payload names another tenant, the signature is the original one
        tampered: (state, claims) =>
          `${own.sign({ ...claims, tenantId: gw.otherTenantId }).split('.')[0]}.${state.split('.')[1]}`,
        // the same claims signed with another key
        'another key': (_state, claims) => new StateSigner(Buffer.alloc(32, 7)).sign(claims),
        // the gateway's own key, the expiry passed
        expired: (_state, claims) => own.sign({ ...claims, expiresAt: Math.floor(Date.now() / 1000) - 1 }),
      };
      for (const [what, forge] of Object.entries(forgeries)) {
        google.auth.account = `forged-${what.replace(' ', '-')}-${mode}@gmail.test`;
        const live = await gw.post('/v1/oauth/login', { app_id: googleApp, type: 'smtp' }).expect(200);
        const liveBack = await google.consent(live.body.url);
        const code = liveBack.searchParams.get('code')!;
        const state = liveBack.searchParams.get('state')!;
        const json = JSON.parse(Buffer.from(state.split('.')[0]!, 'base64url').toString());
        const claims: Claims = {
          tenantId: json.t,
          appId: json.a,
          type: json.y,
          redirectUri: json.r,
          nonce: json.n,
          expiresAt: json.e,
        };
        // The gateway's key signs exactly these claims: the forgery differs only where named.
        expect(own.sign(claims)).toBe(state);
        const r = await request(gw.app)
          .get('/v1/oauth/callback')
          .query({ code, state: forge(state, claims) });
        expect({ what, status: r.status, body: r.body }).toEqual({ what, status: 400, body: invalid });
        const genuine = await request(gw.app).get('/v1/oauth/callback').query({ code, state });
        expect({ what, status: genuine.status }).toEqual({ what, status: 201 });
      }
      // Right key, unexpired, but no login behind its nonce.
      const orphan = own.sign({
        tenantId: gw.tenantId,
        appId: googleApp,
        type: 'smtp',
        redirectUri: REDIRECT,
        nonce: StateSigner.nonce(),
        expiresAt: Math.floor(Date.now() / 1000) + 600,
      });
      await request(gw.app)
        .get('/v1/oauth/callback')
        .query({ code: 'x', state: orphan })
        .expect(400, invalid);
      await request(gw.app).get('/v1/oauth/callback').expect(400, invalid);
      // Denied consent: 400, and that state is spent too.
      google.auth.denyNext = true;
      const denied = await connect({ app_id: googleApp, type: 'smtp' });
      expect(denied.res.status).toBe(400);
      expect(denied.res.body).toEqual({
        success: false,
        error: 'The authorization was not granted',
        details: 'access_denied',
      });
      await request(gw.app).get(`/v1/oauth/callback${denied.back.search}`).expect(400, invalid);
    });

    it('two callbacks with the same state at once: one connects, the other is refused before any exchange', async () => {
      google.auth.account = `race-${mode}@gmail.test`;
      const login = await gw.post('/v1/oauth/login', { app_id: googleApp, type: 'smtp' }).expect(200);
      const back = await google.consent(login.body.url);
      const before = google.auth.tokenRequests.filter((r) => r.grantType === 'authorization_code').length;
      const [a, b] = await Promise.all([
        request(gw.app).get(`/v1/oauth/callback${back.search}`),
        request(gw.app).get(`/v1/oauth/callback${back.search}`),
      ]);
      expect([a.status, b.status].sort()).toEqual([201, 400]);
      expect((a.status === 400 ? a : b).body.error).toBe('Invalid or expired OAuth state');
      expect(google.auth.tokenRequests.filter((r) => r.grantType === 'authorization_code').length).toBe(
        before + 1,
      );
    });

    it('re-authentication updates the same mailer (same account only) and re-activates it without an event', async () => {
      google.auth.account = `reauth-${mode}@gmail.test`;
      const first = await connect({ app_id: googleApp, type: 'smtp' });
      const id = first.res.body.mailer_id;
      const before = await loadOAuthGrant(gw.ctx.db, gw.ctx.sealer, gw.tenantId, id);
      await gw.ctx.db.query(
        `UPDATE mailers SET state = 'deactivated', state_reason = 'oauth_revoked' WHERE id = $1`,
        [id],
      );
      const eventsBefore = (await outboxRows(gw.ctx, RoutingKey.mailerDeactivated)).length;
      // Another account at the consent page: refused, the mailer unchanged.
      google.auth.account = `someone-else-${mode}@gmail.test`;
      const wrong = await connect({ app_id: googleApp, mailer_id: id });
      expect(wrong.res.status).toBe(409);
      expect(wrong.res.body).toMatchObject({ error: "The authorized account is not the mailer's account" });
      // The right account: the same mailer, active again, new tokens.
      google.auth.account = `reauth-${mode}@gmail.test`;
      const again = await connect({ app_id: googleApp, mailer_id: id });
      expect(again.res.status).toBe(200);
      expect(again.res.body).toEqual({
        success: true,
        mailer_id: id,
        message: `OAuth mailer re-authenticated for reauth-${mode}@gmail.test and active again`,
      });
      const view = await gw.get(`/v1/mailer/${id}`).expect(200);
      expect(view.body.data).toMatchObject({
        state: 'active',
        state_reason: null,
        config_type: 'oauth_smtp',
      });
      const after = await loadOAuthGrant(gw.ctx.db, gw.ctx.sealer, gw.tenantId, id);
      expect(after!.refreshToken).not.toBe(before!.refreshToken);
      expect(after!.version).toBeGreaterThan(before!.version);
      expect((await outboxRows(gw.ctx, RoutingKey.mailerDeactivated)).length).toBe(eventsBefore);
      // The type of an existing mailer cannot change.
      const typeChange = await gw
        .post('/v1/oauth/login', { app_id: googleApp, mailer_id: id, type: 'imap' })
        .expect(422);
      expect(typeChange.body.error).toBe(
        'type cannot change for an existing mailer; connect a new mailer instead',
      );
    });

    it("another tenant's app and mailer ids read as absent (404); a password mailer is not an OAuth one", async () => {
      google.auth.account = `iso-${mode}@gmail.test`;
      const { res } = await connect({ app_id: googleApp, type: 'smtp' });
      const id = res.body.mailer_id;
      const o = gw.otherKey;
      expect((await gw.post('/v1/oauth/login', { app_id: googleApp }, o).expect(404)).body.error).toBe(
        'OAuth app not found',
      );
      await gw.delete(`/v1/oauth/apps/${googleApp}`, o).expect(404);
      expect(
        (await gw.post('/v1/oauth/login', { app_id: 'google', mailer_id: id }, o).expect(404)).body.error,
      ).toBe('Mailer not found');
      await gw.post('/v1/oauth/activate', { mailer_id: id, active: false }, o).expect(404);
      await gw.get(`/v1/mailer/${id}`, o).expect(404);
      await gw.post('/v1/oauth/login', { app_id: 'nope' }).expect(404);
      const smtp = await gw
        .post('/v1/mailer/smtp', {
          name: 'pw',
          email: 'pw@example.test',
          config: { host: '127.0.0.1', port: 2525, username: 'u', password: 'p', secure: 'None' },
        })
        .expect(201);
      expect(
        (await gw.post('/v1/oauth/login', { app_id: googleApp, mailer_id: smtp.body.mailer_id }).expect(422))
          .body.error,
      ).toBe('Mailer is not an OAuth mailer');
      await gw.post('/v1/oauth/activate', { mailer_id: smtp.body.mailer_id }).expect(422);
    });

    it('activation: disable and enable; a deactivated mailer must re-authenticate', async () => {
      google.auth.account = `act-${mode}@gmail.test`;
      const id = (await connect({ app_id: googleApp, type: 'smtp' })).res.body.mailer_id;
      expect(
        (await gw.post('/v1/oauth/activate', { mailer_id: id, active: false }).expect(200)).body,
      ).toEqual({
        success: true,
        mailer_id: id,
        state: 'disabled',
        message: 'Mailer disabled',
      });
      expect((await gw.get(`/v1/mailer/${id}`)).body.data.state).toBe('disabled');
      expect((await gw.post('/v1/oauth/activate', { mailer_id: id }).expect(200)).body.state).toBe('active');
      expect((await gw.post('/v1/oauth/activate', { mailer_id: id }).expect(200)).body.message).toBe(
        'Mailer was already active',
      );
      await gw.ctx.db.query(`UPDATE mailers SET state = 'deactivated' WHERE id = $1`, [id]);
      expect((await gw.post('/v1/oauth/activate', { mailer_id: id }).expect(422)).body.error).toBe(
        'Mailer is deactivated; re-authenticate it through POST /v1/oauth/login',
      );
      await gw.post('/v1/oauth/activate', { mailer_id: id, active: false }).expect(409);
      await gw.post('/v1/oauth/activate', { mailer_id: id, active: 'yes' }).expect(400);
      await gw.post('/v1/oauth/activate', {}).expect(400);
    });

    it('an app in use cannot be deleted; an unused one can; the deployment app cannot', async () => {
      await gw.delete(`/v1/oauth/apps/${googleApp}`).expect(409);
      const spare = (
        await gw
          .post('/v1/oauth/apps', { provider: 'google', client_id: 'spare', client_secret: 's' })
          .expect(201)
      ).body.app_id;
      await gw.delete(`/v1/oauth/apps/${spare}`).expect(200, { success: true, message: 'OAuth app deleted' });
      await gw.delete(`/v1/oauth/apps/${spare}`).expect(404);
      await gw.delete('/v1/oauth/apps/google').expect(422);
    });

    it('every OAuth route but the callback needs a key; the redirect URI falls back from login to app to OAUTH_REDIRECT_URI', async () => {
      await request(gw.app).get('/v1/oauth/apps').expect(401);
      await request(gw.app).post('/v1/oauth/login').send({ app_id: 'google' }).expect(401);
      await request(gw.app).post('/v1/oauth/activate').send({ mailer_id: 'x' }).expect(401);
      const noRedirect = (
        await gw.post('/v1/oauth/apps', {
          provider: 'microsoft',
          client_id: 'tenant-ms-client',
          client_secret: 'm',
        })
      ).body.app_id;
      // OAUTH_REDIRECT_URI is set for this gateway: it is the fallback.
      const url = new URL((await gw.post('/v1/oauth/login', { app_id: noRedirect }).expect(200)).body.url);
      expect(url.searchParams.get('redirect_uri')).toBe(REDIRECT);
      expect(url.pathname).toBe('/common/oauth2/v2.0/authorize');
      const given = new URL(
        (
          await gw
            .post('/v1/oauth/login', { app_id: noRedirect, redirect_uri: 'https://app.example.test/cb' })
            .expect(200)
        ).body.url,
      );
      expect(given.searchParams.get('redirect_uri')).toBe('https://app.example.test/cb');
    });
  });
}
