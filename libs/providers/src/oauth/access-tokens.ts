/**
 * AccessTokenSource for stored OAuth mailers (the seam of types.ts; used by the send service's
 * Gmail/Graph transports and the IMAP service's mailbox clients):
 *
 *   const tokens = oauthAccessTokens({ grants: oauthGrantStore(db, sealer), kv, logger, settings });
 *   const source = tokens.forMailer(tenantId, mailerId);  // () => Promise<string>
 *
 * Storage is injected (`grants`, the OAuthGrantStore of libs/contracts: libs/store's
 * oauthGrantStore in the services), so this library never imports the store.
 *
 * Each call reads the mailer's grant (tokens sealed at rest by the store) and returns its
 * access token while more than OAUTH_REFRESH_AHEAD_S of life is left; otherwise it refreshes:
 *
 * - One refresh at a time per mailer: concurrent calls in one process share one refresh, and
 *   across replicas a kv lock names the refresher; the others wait for the stored result (reading
 *   the grant again) up to OAUTH_REFRESH_WAIT_MS. The result is stored over the version it was
 *   computed from only (a re-authentication meanwhile wins).
 * - `invalid_grant` (revoked, expired, consent withdrawn) deactivates the mailer with
 *   `oauth_revoked`: state and MAILER_DEACTIVATED in one transaction (`grants.deactivateMailer`:
 *   the store's deactivateMailer, the same path as the IMAP service's `provider_auth_error`),
 *   routed by the webhook dispatcher (docs/webhooks.md); the call throws OAuthRevokedError. A deactivated mailer's
 *   source throws OAuthRevokedError at once, without asking the provider.
 * - Provider busy (429/5xx/no answer) or app refused: a token that has not really expired yet is
 *   still returned; else ProviderThrottledError (retry after `retryAfterMs`) or
 *   OAuthAppRejectedError (the app is misconfigured; the mailer is not deactivated).
 *
 * The source takes the API clients' hint (api/token.ts TokenSource): asked with `{ rejected }`
 * after a provider API refused a token (401), it refreshes when the stored token is that one
 * (whatever its stored expiry), so the client's one repeat goes out with a new token and a
 * revoked grant is found at once; a stored token that differs (another caller or replica
 * refreshed meanwhile) is returned as is.
 *
 * `invalidate(tenantId, mailerId)`: marks the stored token expired without a request at hand
 * (the next call refreshes).
 */
import { oauthMailerTypeOf } from '@mailyard/contracts';
import type { OAuthGrantStore, StoredOAuthGrant } from '@mailyard/contracts';
import { type Kv, type Logger, acquireKvLease } from '@mailyard/platform';
import { type ThrottleGate, kvThrottleGate } from '../api/throttle-gate';
import { type ProviderSettings, providerEndpoints } from '../settings';
import { resolveOAuthApp } from './apps';
import type { OAuthClientFactory } from './client';
import { OAuthAppRejectedError, OAuthGrantNotFoundError } from './errors';
import { oauthClientFor } from './oauth-client';
import { tokenFreshness } from './refresh-policy';
import { OAuthRevokedError, ProviderThrottledError } from './types';

/**
 * An AccessTokenSource that also takes the API clients' hint (the shape of api/token.ts
 * TokenSource): `rejected` = the token a provider API just refused.
 */
export type MailerTokenSource = ((request?: { rejected?: string }) => Promise<string>) & {
  /** The mailer's provider Retry-After, kept in the kv (api/throttle-gate.ts). */
  readonly throttle?: ThrottleGate;
};

export interface OAuthAccessTokensDeps {
  /** Grants, tenant apps and the automatic deactivation (libs/store oauthGrantStore). */
  grants: OAuthGrantStore;
  kv: Kv;
  /** providerSettings(config): endpoints, deployment apps, refresh margin and waits. */
  settings: ProviderSettings;
  logger?: Logger;
  /** Called after a deactivation wrote its outbox row (lets a relay publish at once). */
  onOutboxWrite?: () => void;
}

export interface OAuthAccessTokens {
  /** The token source of one OAuth mailer of one tenant. */
  forMailer(tenantId: string, mailerId: string): MailerTokenSource;
  /** Marks the mailer's stored access token expired (the provider API refused it). */
  invalidate(tenantId: string, mailerId: string): Promise<void>;
}

/** Pause between reads of the grant while another replica refreshes it. */
const WAIT_STEP_MS = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function oauthAccessTokens(deps: OAuthAccessTokensDeps): OAuthAccessTokens {
  const { grants, kv, settings } = deps;
  const aheadMs = settings.OAUTH_REFRESH_AHEAD_S * 1000;
  const clientOptions = { endpoints: providerEndpoints(settings), timeoutMs: settings.OAUTH_HTTP_TIMEOUT_MS };
  const clientFor: OAuthClientFactory = (app) => oauthClientFor(app, clientOptions);
  // A refresh makes a few tries of its own (the provider libraries retry 429/5xx): the lock
  // outlives them.
  const lockTtlMs = Math.max(30_000, settings.OAUTH_HTTP_TIMEOUT_MS * 4);
  const inFlight = new Map<string, Promise<string>>();

  const load = async (tenantId: string, mailerId: string): Promise<StoredOAuthGrant> => {
    const grant = await grants.loadGrant(tenantId, mailerId);
    if (!grant) throw new OAuthGrantNotFoundError(`no OAuth grant for mailer ${mailerId}`);
    if (grant.mailerState === 'deactivated')
      throw new OAuthRevokedError(`mailer ${mailerId} is deactivated; it must be re-authenticated`);
    return grant;
  };

  /** Refreshes with the lock held; returns the new access token (or the one another writer stored). */
  const refresh = async (grant: StoredOAuthGrant): Promise<string | null> => {
    const type = oauthMailerTypeOf(grant.configType);
    if (!grant.refreshToken || !type) {
      await deactivate(grant, 'no refresh token stored');
      throw new OAuthRevokedError('no refresh token stored');
    }
    const app = await resolveOAuthApp({ apps: grants, settings }, grant.tenantId, grant.appId);
    if (!app) throw new OAuthAppRejectedError(`OAuth app ${grant.appId} is no longer configured`);
    let tokens: Awaited<ReturnType<ReturnType<OAuthClientFactory>['refresh']>>;
    try {
      tokens = await clientFor(app).refresh({ type, refreshToken: grant.refreshToken });
    } catch (err) {
      if (err instanceof OAuthRevokedError) await deactivate(grant, err.message);
      throw err;
    }
    const saved = await grants.saveRefreshedGrant(grant.tenantId, grant.mailerId, grant.version, {
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      accessExpiresAt: tokens.expiresAt,
      scopes: tokens.scopes,
    });
    deps.logger?.debug('oauth: access token refreshed', {
      mailer_id: grant.mailerId,
      provider: grant.provider,
      stored: saved,
    });
    return saved ? tokens.accessToken : null;
  };

  const deactivate = async (grant: StoredOAuthGrant, providerError: string) => {
    const changed = await grants.deactivateMailer(
      grant.tenantId,
      grant.mailerId,
      'oauth_revoked',
      providerError,
    );
    if (changed) {
      deps.onOutboxWrite?.();
      deps.logger?.warn('oauth: grant revoked; mailer deactivated', {
        mailer_id: grant.mailerId,
        provider: grant.provider,
        provider_error: providerError,
      });
    }
  };

  /**
   * A still-valid token when the refresh could not be made now (never the one a provider just
   * refused); else the refresh's error.
   */
  const fallback = (grant: StoredOAuthGrant, err: unknown, rejected: string | undefined): string => {
    const usable = tokenFreshness(grant, Date.now(), 0, rejected) === 'fresh';
    if (usable && grant.accessToken && !(err instanceof OAuthRevokedError)) {
      deps.logger?.warn('oauth: refresh failed; using the current token until it expires', {
        mailer_id: grant.mailerId,
        error: (err as Error).message,
      });
      return grant.accessToken;
    }
    throw err;
  };

  const accessToken = async (tenantId: string, mailerId: string, rejected?: string): Promise<string> => {
    const deadline = Date.now() + settings.OAUTH_REFRESH_WAIT_MS;
    const fresh = (g: StoredOAuthGrant) => tokenFreshness(g, Date.now(), aheadMs, rejected) === 'fresh';
    for (;;) {
      const grant = await load(tenantId, mailerId);
      if (fresh(grant)) return grant.accessToken!;
      const lockKey = `oauth:refresh:${mailerId}`;
      const lease = await acquireKvLease(kv, lockKey, lockTtlMs);
      if (lease) {
        try {
          // Another replica may have stored a new token between our read and the lock.
          const current = await load(tenantId, mailerId);
          if (fresh(current)) return current.accessToken!;
          try {
            const token = await refresh(current);
            if (token) return token;
            continue; // a re-authentication or another writer stored a newer grant: read it
          } catch (err) {
            return fallback(current, err, rejected);
          }
        } finally {
          await lease.release().catch(() => undefined);
        }
      }
      if (Date.now() >= deadline) {
        return fallback(
          grant,
          new ProviderThrottledError('another replica is refreshing this token', null, 1000),
          rejected,
        );
      }
      await sleep(WAIT_STEP_MS);
    }
  };

  return {
    forMailer(tenantId, mailerId) {
      const source = (request?: { rejected?: string }) => {
        // Callers naming the same refused token share one call; they never join a call that
        // may hand out the refused token again.
        const rejected = request?.rejected;
        const key = `${tenantId}\u0000${mailerId}\u0000${rejected ?? ''}`;
        const running = inFlight.get(key);
        if (running) return running;
        const p = accessToken(tenantId, mailerId, rejected).finally(() => inFlight.delete(key));
        inFlight.set(key, p);
        return p;
      };
      return Object.assign(source, { throttle: kvThrottleGate(kv, mailerId) });
    },
    invalidate: (tenantId, mailerId) => grants.expireAccessToken(tenantId, mailerId),
  };
}
