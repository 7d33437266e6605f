import {
  OAuthAppRejectedError,
  OAuthGrantNotFoundError,
  OAuthRevokedError,
  ProviderAuthError,
  ProviderRequestError,
  ProviderThrottledError,
} from '@mailyard/providers';
import { AUTH_REASON_PREFIX } from '@mailyard/providers';
import { classifyProviderError } from './classify-provider-error';

const gmail = { provider: 'Gmail API' };

describe('classifyProviderError', () => {
  it('retries throttling like a temporary SMTP reply, naming the wait', () => {
    const f = classifyProviderError(
      new ProviderThrottledError('Gmail API 429: slow down', 429, 30_000),
      gmail,
    );
    expect(f).toEqual({
      kind: 'temporary',
      failedReason: 'Temporary failure: Gmail API is rate limiting the mailer (retry after 30 s)',
      providerError: 'Gmail API 429: slow down',
      bounceCategory: 'rate_limited',
      retryAfterMs: 30_000,
    });
    expect(classifyProviderError(new ProviderThrottledError('x', 503, null), gmail).failedReason).toBe(
      'Temporary failure: Gmail API is unavailable',
    );
    expect(classifyProviderError(new ProviderThrottledError('x', null, null), gmail).kind).toBe('temporary');
  });

  it('makes a revoked grant a final authentication failure that deactivates with oauth_revoked', () => {
    const f = classifyProviderError(new OAuthRevokedError('invalid_grant'), gmail);
    expect(f.kind).toBe('auth');
    expect(f.deactivation).toBe('oauth_revoked');
    expect(f.failedReason.startsWith(AUTH_REASON_PREFIX)).toBe(true);
    expect(f.failedReason).toContain('the mailer was deactivated');
    expect(f.providerError).toBe('invalid_grant');
  });

  it('makes a refused account a final authentication failure with provider_auth_error', () => {
    const f = classifyProviderError(new ProviderAuthError('denied', 403), { provider: 'Microsoft Graph' });
    expect(f).toMatchObject({ kind: 'auth', deactivation: 'provider_auth_error' });
    expect(f.failedReason).toContain('Microsoft Graph refused');
    expect(f.failedReason).toContain('the mailer was deactivated');
  });

  it('retries a refused OAuth app (the mailer is not to blame) and ends a copy whose mailer lost its grant', () => {
    expect(classifyProviderError(new OAuthAppRejectedError('invalid_client: Unauthorized'), gmail)).toEqual({
      kind: 'temporary',
      failedReason:
        'Temporary failure: the provider refused the OAuth app of the mailer (client_id / client_secret)',
      providerError: 'invalid_client: Unauthorized',
    });
    expect(classifyProviderError(new OAuthGrantNotFoundError('no OAuth grant'), gmail)).toMatchObject({
      kind: 'permanent',
      failedReason: 'Mailer configuration could not be loaded: the mailer has no OAuth grant',
    });
  });

  it('makes a refused message permanent with a readable reason', () => {
    const thread = classifyProviderError(
      new ProviderRequestError('Gmail API 404: not found', 404, 'notFound'),
      {
        ...gmail,
        threadId: '18c0',
      },
    );
    expect(thread).toMatchObject({
      kind: 'permanent',
      failedReason: 'Gmail thread 18c0 (Thread-Id) was not found',
    });
    const sendAs = classifyProviderError(new ProviderRequestError('x', 403, 'ErrorSendAsDenied'), gmail);
    expect(sendAs.failedReason).toBe('The mailer may not send as the message From address');
    expect(classifyProviderError(new ProviderRequestError('x', 413, ''), gmail).failedReason).toBe(
      'Message too large for Gmail API',
    );
    expect(classifyProviderError(new ProviderRequestError('x', 400, ''), gmail).kind).toBe('permanent');
  });

  it("names a bounce category only for failures about the message (never the mailer's access)", () => {
    expect(classifyProviderError(new ProviderRequestError('x', 413, ''), gmail).bounceCategory).toBe(
      'content',
    );
    expect(classifyProviderError(new ProviderRequestError('x', 400, ''), gmail).bounceCategory).toBe(
      'unknown',
    );
    expect(classifyProviderError(new Error('boom'), gmail).bounceCategory).toBe('unknown');
    expect(classifyProviderError(new ProviderAuthError('denied', 403), gmail)).not.toHaveProperty(
      'bounceCategory',
    );
    expect(classifyProviderError(new OAuthRevokedError('invalid_grant'), gmail)).not.toHaveProperty(
      'bounceCategory',
    );
  });

  it('retries anything unexpected', () => {
    expect(classifyProviderError(new Error('socket hang up'), gmail)).toMatchObject({
      kind: 'temporary',
      providerError: 'socket hang up',
    });
  });
});
