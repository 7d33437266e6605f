import { classifyTokenFailure, parseRetryAfter } from './classify-token-error';

const NOW = Date.UTC(2026, 0, 5, 10, 0, 0);

describe('token endpoint failures', () => {
  it.each([
    [{ status: 400, error: 'invalid_grant', description: 'Token has been expired or revoked.' }, 'revoked'],
    [{ status: 400, error: 'interaction_required' }, 'revoked'],
    [{ status: 400, error: 'consent_required' }, 'revoked'],
    [{ status: 429, error: 'rate_limit_exceeded' }, 'throttled'],
    [{ status: 503 }, 'throttled'],
    [{ status: 500, error: 'invalid_grant' }, 'throttled'],
    [{ status: 400, error: 'temporarily_unavailable' }, 'throttled'],
    [{ status: null }, 'throttled'],
    [{ status: 401, error: 'invalid_client' }, 'app'],
    [{ status: 400, error: 'unauthorized_client' }, 'app'],
    [{ status: 401 }, 'app'],
    [{ status: 400, error: 'invalid_request' }, 'failed'],
    [{ status: 400, error: 'invalid_scope' }, 'failed'],
  ] as const)('%j is %s', (f, kind) => {
    expect(classifyTokenFailure(f, NOW).kind).toBe(kind);
  });

  it('carries error and description as provider_error, never more than 1000 characters', () => {
    const v = classifyTokenFailure(
      { status: 400, error: 'invalid_grant', description: 'Token has been expired or revoked.' },
      NOW,
    );
    expect(v.providerError).toBe('invalid_grant: Token has been expired or revoked.');
    expect(
      classifyTokenFailure({ status: 400, error: 'x', description: 'y'.repeat(5000) }, NOW).providerError,
    ).toHaveLength(1000);
    expect(classifyTokenFailure({ status: 503 }, NOW).providerError).toBe('HTTP 503');
    expect(classifyTokenFailure({ status: null }, NOW).providerError).toBe('no response');
  });

  it('reads Retry-After for throttling only', () => {
    expect(classifyTokenFailure({ status: 429, retryAfter: '7' }, NOW).retryAfterMs).toBe(7000);
    expect(
      classifyTokenFailure({ status: 400, error: 'invalid_grant', retryAfter: '7' }, NOW).retryAfterMs,
    ).toBeNull();
  });

  it('parses Retry-After as seconds or an HTTP date, capped at a day', () => {
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter('120', NOW)).toBe(120_000);
    expect(parseRetryAfter(new Date(NOW + 30_000).toUTCString(), NOW)).toBe(30_000);
    expect(parseRetryAfter(new Date(NOW - 30_000).toUTCString(), NOW)).toBe(0);
    expect(parseRetryAfter('9999999', NOW)).toBe(24 * 3600_000);
    expect(parseRetryAfter('soon', NOW)).toBeNull();
    expect(parseRetryAfter(undefined, NOW)).toBeNull();
  });
});
