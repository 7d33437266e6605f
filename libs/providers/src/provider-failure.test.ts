import { ProviderAuthError, ProviderRequestError } from './api/errors';
import { OAuthAppRejectedError, OAuthGrantNotFoundError, OAuthRequestError } from './oauth/errors';
import { OAuthRevokedError, ProviderThrottledError } from './oauth/types';
import { classifyProviderFailure } from './provider-failure';

describe('classifyProviderFailure', () => {
  it('reads each OAuth and account error as its kind', () => {
    expect(classifyProviderFailure(new OAuthRevokedError('invalid_grant'))).toEqual({
      kind: 'grant-revoked',
      message: 'invalid_grant',
    });
    expect(classifyProviderFailure(new ProviderAuthError('denied', 403))).toEqual({
      kind: 'access-refused',
      status: 403,
      message: 'denied',
    });
    expect(classifyProviderFailure(new OAuthAppRejectedError('invalid_client'))?.kind).toBe('app-rejected');
    expect(classifyProviderFailure(new OAuthGrantNotFoundError('no grant'))?.kind).toBe('grant-missing');
    expect(classifyProviderFailure(new OAuthRequestError('invalid_request: bad code', 400))?.kind).toBe(
      'request-invalid',
    );
  });

  it('says why a provider is busy, with its Retry-After', () => {
    expect(classifyProviderFailure(new ProviderThrottledError('slow down', 429, 30_000))).toEqual({
      kind: 'throttled',
      busy: 'rate-limited',
      status: 429,
      retryAfterMs: 30_000,
      message: 'slow down',
    });
    expect(classifyProviderFailure(new ProviderThrottledError('x', 403, null))).toMatchObject({
      busy: 'rate-limited',
    });
    expect(classifyProviderFailure(new ProviderThrottledError('x', 503, null))).toMatchObject({
      busy: 'unavailable',
    });
    expect(classifyProviderFailure(new ProviderThrottledError('x', null, null))).toMatchObject({
      busy: 'no-answer',
    });
  });

  it('says what a provider refused for good', () => {
    const refusal = (status: number, reason = '') =>
      classifyProviderFailure(new ProviderRequestError('refused', status, reason));
    expect(refusal(404)).toEqual({
      kind: 'request-refused',
      refusal: 'not-found',
      status: 404,
      message: 'refused',
    });
    expect(refusal(413)).toMatchObject({ refusal: 'too-large' });
    expect(refusal(403, 'ErrorSendAsDenied')).toMatchObject({ refusal: 'send-as-denied' });
    expect(refusal(400)).toMatchObject({ refusal: 'invalid' });
    expect(refusal(409)).toMatchObject({ refusal: 'other', status: 409 });
  });

  it('leaves anything else to the caller', () => {
    expect(classifyProviderFailure(new Error('connection terminated'))).toBeNull();
    expect(classifyProviderFailure(new TypeError('unsearchable'))).toBeNull();
    expect(classifyProviderFailure('a string')).toBeNull();
  });
});
