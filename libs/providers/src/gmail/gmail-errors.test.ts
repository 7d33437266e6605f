import { ProviderRequestError } from '../api/errors';
import { classifyGmailError } from './gmail-errors';

/** The parts of a GaxiosError the classifier reads, with the request that must not leak. */
function gaxios(
  status: number | undefined,
  body: unknown,
  headers: Record<string, string> = {},
  code?: string,
) {
  return {
    message: 'request failed',
    code,
    config: { headers: { Authorization: 'Bearer secret-token' } },
    ...(status ? { status, response: { status, headers: new Headers(headers), data: body } } : {}),
  };
}
const google = (code: number, reason: string, message = 'msg') => ({
  error: { code, message, errors: [{ reason }] },
});

describe('classifyGmailError', () => {
  it('reads 401 as a refused token', () => {
    expect(classifyGmailError(gaxios(401, google(401, 'authError')))).toEqual({
      kind: 'unauthorized',
      message: 'msg',
    });
  });

  it('reads 429, 5xx and 403 usage limits as busy, with Retry-After', () => {
    expect(
      classifyGmailError(gaxios(429, google(429, 'rateLimitExceeded'), { 'Retry-After': '7' })),
    ).toMatchObject({
      kind: 'busy',
      status: 429,
      retryAfterMs: 7000,
    });
    expect(classifyGmailError(gaxios(500, google(500, 'backendError')))).toMatchObject({
      kind: 'busy',
      retryAfterMs: null,
    });
    expect(classifyGmailError(gaxios(403, google(403, 'userRateLimitExceeded')))).toMatchObject({
      kind: 'busy',
      status: 403,
    });
  });

  it('reads other 403s as denied and other statuses as request errors', () => {
    expect(classifyGmailError(gaxios(403, google(403, 'insufficientPermissions')))).toMatchObject({
      kind: 'denied',
    });
    const f = classifyGmailError(gaxios(400, google(400, 'invalidArgument', 'Invalid To header')));
    expect(f.kind === 'error' && f.error).toEqual(
      new ProviderRequestError('Gmail API 400: Invalid To header', 400, 'invalidArgument'),
    );
  });

  it('reads connection failures as busy and never passes the request on', () => {
    expect(classifyGmailError(gaxios(undefined, null, {}, 'ECONNRESET'))).toMatchObject({
      kind: 'busy',
      status: null,
    });
    const f = classifyGmailError(gaxios(undefined, null, {}, 'CERT_HAS_EXPIRED'));
    if (f.kind !== 'error') throw new Error('expected an error');
    expect(JSON.stringify(f.error)).not.toContain('secret-token');
    expect((f.error as Error).message).toContain('CERT_HAS_EXPIRED');
  });
});
