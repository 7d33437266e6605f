/**
 * The login and callback steps (docs/oauth.md "Login and callback (authorization code with PKCE)"):
 *
 * - login without `token`: resolve the app (the tenant's, or the deployment's `google` /
 *   `microsoft`), the mailer type (a re-authentication keeps the mailer's) and the redirect URI
 *   (login, else app, else OAUTH_REDIRECT_URI); keep a fresh PKCE verifier server-side under a
 *   new nonce; answer the provider's consent URL carrying the signed, expiring state.
 * - login with `token`: exchange the refresh token at once and connect the mailer.
 * - callback: verify the state (signature, expiry), take its nonce once (a replay finds
 *   nothing), then exchange the code with the verifier and connect the mailer of the tenant the
 *   state names. Every refusal before the exchange is the same 400 (invalidState).
 */
import {
  MailerErrorText,
  type OAuthAppLookup,
  type OAuthCallbackQuery,
  OAuthErrorText,
  type OAuthLoginRequest,
  type OAuthMailerType,
  oauthMailerTypeOf,
} from '@mailyard/contracts';
import { type Db, HttpError, type Logger, type Sealer, badRequest, notFound } from '@mailyard/platform';
import {
  type OAuthAppConfig,
  type OAuthClient,
  type ProviderSettings,
  StateSigner,
  newPkce,
  resolveOAuthApp,
} from '@mailyard/providers';
import { mailers } from '@mailyard/store';
import { type Connected, connectMailer } from './connect-mailer';
import type { PendingLogins } from './pending-logins';
import { providerHttpError } from './provider-errors';

export interface OAuthFlowDeps {
  db: Db;
  sealer: Sealer;
  /** The tenants' own apps (libs/store oauthGrantStore). */
  apps: OAuthAppLookup;
  logger: Logger;
  settings: ProviderSettings;
  signer: StateSigner;
  pending: PendingLogins;
  clientFor: (app: OAuthAppConfig) => OAuthClient;
}

async function appOf(deps: OAuthFlowDeps, tenantId: string, appId: string): Promise<OAuthAppConfig> {
  const app = await resolveOAuthApp(deps, tenantId, appId);
  if (!app) throw notFound(OAuthErrorText.appNotFound);
  return app;
}

/** The type of the login: a re-authentication keeps its mailer's (and must be an OAuth mailer). */
async function typeOf(
  deps: OAuthFlowDeps,
  tenantId: string,
  input: Pick<OAuthLoginRequest, 'mailer_id' | 'type'>,
): Promise<{ type: OAuthMailerType; email?: string }> {
  if (!input.mailer_id) return { type: input.type ?? 'smtp' };
  const mailer = await mailers.get(deps.db, tenantId, input.mailer_id);
  if (!mailer) throw notFound(MailerErrorText.mailerNotFound);
  const type = oauthMailerTypeOf(mailer.configType);
  if (mailer.connectionType !== 'oauth' || !type) throw new HttpError(422, OAuthErrorText.notOAuthMailer);
  if (input.type && input.type !== type) throw new HttpError(422, OAuthErrorText.typeChange);
  return { type, email: mailer.email };
}

export type LoginOutcome = { url: string } | Connected;

export async function login(
  deps: OAuthFlowDeps,
  tenantId: string,
  input: OAuthLoginRequest,
): Promise<LoginOutcome> {
  const app = await appOf(deps, tenantId, input.app_id);
  const { type, email } = await typeOf(deps, tenantId, input);

  if (input.token !== undefined) {
    let grant: Awaited<ReturnType<OAuthClient['refresh']>>;
    try {
      grant = await deps.clientFor(app).refresh({ type, refreshToken: input.token });
    } catch (err) {
      throw providerHttpError(err, 'token');
    }
    return connectMailer(deps, {
      tenantId,
      app,
      type,
      grant,
      givenRefreshToken: input.token,
      ...(input.mailer_id ? { mailerId: input.mailer_id } : {}),
      ...(input.name ? { name: input.name } : {}),
    });
  }

  const redirectUri = input.redirect_uri ?? app.redirectUri ?? deps.settings.OAUTH_REDIRECT_URI;
  if (!redirectUri) throw badRequest(OAuthErrorText.redirectUriRequired);
  const nonce = StateSigner.nonce();
  const pkce = newPkce();
  await deps.pending.put(nonce, { verifier: pkce.verifier, ...(input.name ? { name: input.name } : {}) });
  const state = deps.signer.sign({
    tenantId,
    appId: app.appId,
    type,
    ...(input.mailer_id ? { mailerId: input.mailer_id } : {}),
    redirectUri,
    nonce,
    expiresAt: Math.floor(Date.now() / 1000) + deps.settings.OAUTH_STATE_TTL_S,
  });
  const url = await deps.clientFor(app).consentUrl({
    type,
    redirectUri,
    state,
    codeChallenge: pkce.challenge,
    ...(email ? { loginHint: email } : {}),
  });
  return { url };
}

export async function callback(deps: OAuthFlowDeps, query: OAuthCallbackQuery): Promise<Connected> {
  const check = deps.signer.verify(query.state);
  if (!check.ok) {
    deps.logger.info('oauth callback: state refused', { reason: check.reason });
    throw badRequest(OAuthErrorText.invalidState);
  }
  const { state } = check;
  const pending = await deps.pending.take(state.nonce);
  if (!pending) {
    deps.logger.info('oauth callback: state already used or its login expired', {
      tenant_id: state.tenantId,
    });
    throw badRequest(OAuthErrorText.invalidState);
  }
  if (query.error) throw badRequest(OAuthErrorText.consentDenied, query.error);
  if (!query.code) throw badRequest(OAuthErrorText.codeRequired);
  const app = await appOf(deps, state.tenantId, state.appId);
  let grant: Awaited<ReturnType<OAuthClient['exchangeCode']>>;
  try {
    grant = await deps.clientFor(app).exchangeCode({
      type: state.type,
      code: query.code,
      redirectUri: state.redirectUri,
      codeVerifier: pending.verifier,
    });
  } catch (err) {
    throw providerHttpError(err, 'code');
  }
  return connectMailer(deps, {
    tenantId: state.tenantId,
    app,
    type: state.type,
    grant,
    ...(state.mailerId ? { mailerId: state.mailerId } : {}),
    ...(pending.name ? { name: pending.name } : {}),
  });
}
