/**
 * Turns a grant into a mailer (the callback and the login with a refresh `token` both end here):
 * the account must have an email (id_token), the grant must cover the API scopes of the mailer's
 * type, and a refresh token must exist. Then either a new mailer (id prefix and config_type by
 * type: oauth_smtp_, oauth_imap_, oauth_smtp_imap_) or the given mailer re-authenticated: same
 * account only, tokens replaced, a deactivated mailer active again (no event).
 */
import {
  MailerErrorText,
  OAUTH_MAILER_KINDS,
  OAuthErrorText,
  type OAuthMailerType,
  newId,
} from '@mailyard/contracts';
import { type Db, HttpError, type Sealer, conflict, notFound } from '@mailyard/platform';
import { type OAuthAppConfig, type TokenGrant, consentScopes, missingScopes } from '@mailyard/providers';
import { type ConnectResult, createOAuthMailer, mailers, reconnectOAuthMailer } from '@mailyard/store';

export interface ConnectInput {
  tenantId: string;
  app: OAuthAppConfig;
  type: OAuthMailerType;
  grant: TokenGrant;
  /** The refresh token given to the login (kept when the provider did not send a new one). */
  givenRefreshToken?: string;
  mailerId?: string;
  name?: string;
}

export interface Connected {
  mailerId: string;
  created: boolean;
  message: string;
}

export async function connectMailer(
  deps: { db: Db; sealer: Sealer },
  input: ConnectInput,
): Promise<Connected> {
  const { grant, app, type } = input;
  const email = grant.email;
  if (!email) throw new HttpError(422, OAuthErrorText.noEmail);
  const scopes = grant.scopes ?? consentScopes(app.provider, type);
  const missing = missingScopes(app.provider, type, scopes);
  if (missing.length > 0)
    throw new HttpError(422, OAuthErrorText.scopesMissing, { details: missing.join(' ') });
  const refreshToken = grant.refreshToken ?? input.givenRefreshToken ?? null;
  if (!refreshToken)
    throw new HttpError(422, OAuthErrorText.grantRejected, { details: 'no refresh token was issued' });
  const connection = {
    provider: app.provider,
    appId: app.appId,
    tenantApp: app.tenantApp,
    accountEmail: email,
    tokens: { accessToken: grant.accessToken, refreshToken, accessExpiresAt: grant.expiresAt, scopes },
  };

  let result: ConnectResult;
  if (input.mailerId) {
    const existing = await mailers.get(deps.db, input.tenantId, input.mailerId);
    if (!existing) throw notFound(MailerErrorText.mailerNotFound);
    const account = (existing.oauth?.accountEmail || existing.email).toLowerCase();
    if (account !== email)
      throw conflict(OAuthErrorText.accountMismatch, { authorized: email, mailer_email: account });
    result = await reconnectOAuthMailer(deps.db, deps.sealer, input.tenantId, input.mailerId, connection);
  } else {
    const kind = OAUTH_MAILER_KINDS[type];
    result = await createOAuthMailer(deps.db, deps.sealer, input.tenantId, {
      ...connection,
      id: newId(kind.prefix),
      configType: kind.configType,
      name: input.name ?? email,
    });
  }
  switch (result.outcome) {
    case 'created':
      return { mailerId: result.mailerId, created: true, message: `OAuth mailer connected for ${email}` };
    case 'updated':
      return {
        mailerId: result.mailerId,
        created: false,
        message: result.reactivated
          ? `OAuth mailer re-authenticated for ${email} and active again`
          : `OAuth mailer re-authenticated for ${email}`,
      };
    case 'app_not_found':
      throw notFound(OAuthErrorText.appNotFound);
    default:
      throw notFound(MailerErrorText.mailerNotFound);
  }
}
