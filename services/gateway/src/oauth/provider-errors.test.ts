import { HttpError } from '@mailyard/platform';
import {
  OAuthAppRejectedError,
  OAuthRequestError,
  OAuthRevokedError,
  ProviderThrottledError,
} from '@mailyard/providers';
import { providerHttpError } from './provider-errors';

const http = (e: unknown) => e as HttpError;

describe('provider failures as API answers', () => {
  it('a refused code or token is 400 with the provider error as details', () => {
    const e = http(providerHttpError(new OAuthRevokedError('invalid_grant: Bad Request'), 'code'));
    expect(e).toBeInstanceOf(HttpError);
    expect(e.toEnvelope()).toEqual({
      success: false,
      error: 'The provider rejected the authorization',
      details: 'invalid_grant: Bad Request',
    });
    expect(http(providerHttpError(new OAuthRevokedError('invalid_grant'), 'token')).message).toBe(
      'The provider rejected the refresh token',
    );
    expect(http(providerHttpError(new OAuthRequestError('redirect_uri_mismatch', 400), 'code')).status).toBe(
      400,
    );
  });

  it('a refused app is 422', () => {
    const e = http(providerHttpError(new OAuthAppRejectedError('invalid_client: Unauthorized'), 'code'));
    expect(e.status).toBe(422);
    expect(e.message).toBe('The provider rejected the OAuth app credentials (client_id / client_secret)');
  });

  it('a busy provider is 503 with Retry-After in whole seconds; no answer at all says so', () => {
    const e = http(providerHttpError(new ProviderThrottledError('HTTP 429', 429, 6500), 'token'));
    expect(e.status).toBe(503);
    expect(e.headers).toEqual({ 'Retry-After': '7' });
    const down = http(providerHttpError(new ProviderThrottledError('no response', null, null), 'code'));
    expect(down.message).toBe('The provider could not be reached');
    expect(down.headers).toEqual({});
  });

  it('anything else is passed on unchanged (a 500, logged)', () => {
    const bug = new TypeError('x is undefined');
    expect(providerHttpError(bug, 'code')).toBe(bug);
  });
});
