import {
  OAuthAppRejectedError,
  OAuthRevokedError,
  ProviderAuthError,
  ProviderRequestError,
  ProviderThrottledError,
} from '@mailyard/providers';
import { MailboxError } from '../../mailbox/mailbox-client';
import { isGone, toMailboxError } from './provider-errors';

const as = (err: unknown) => toMailboxError(err, 'Gmail API') as MailboxError;

describe('provider errors as mailbox errors', () => {
  it('a revoked grant is auth without a deactivation of its own (the token layer sent MAILER_DEACTIVATED)', () => {
    const e = as(new OAuthRevokedError('invalid_grant: Token has been expired or revoked.'));
    expect(e).toBeInstanceOf(MailboxError);
    expect(e).toMatchObject({ kind: 'auth', deactivation: null, source: 'Gmail API' });
    expect(e.message).toMatch(/revoked or has expired.*invalid_grant/);
  });

  it('a refused account is auth with provider_auth_error', () => {
    expect(
      as(new ProviderAuthError('Gmail API denied access (403): insufficientPermissions', 403)),
    ).toMatchObject({
      kind: 'auth',
      deactivation: 'provider_auth_error',
    });
  });

  it('a busy provider is transient with its Retry-After; the rest is terminal or passes through', () => {
    expect(as(new ProviderThrottledError('Gmail API 429: slow down', 429, 30_000))).toMatchObject({
      kind: 'transient',
      retryAfterMs: 30_000,
    });
    expect(as(new ProviderThrottledError('Gmail API unreachable', null, null))).toMatchObject({
      kind: 'transient',
      retryAfterMs: null,
    });
    expect(as(new OAuthAppRejectedError('invalid_client'))).toMatchObject({ kind: 'terminal' });
    expect(as(new ProviderRequestError('Gmail API 400: bad', 400, 'invalidArgument'))).toMatchObject({
      kind: 'terminal',
    });
    expect(as(new TypeError('participant must be a bare email address'))).toMatchObject({ kind: 'terminal' });
    const db = new Error('connection terminated');
    expect(toMailboxError(db, 'Gmail API')).toBe(db);
    const already = new MailboxError('transient', 'x');
    expect(toMailboxError(already, 'Gmail API')).toBe(already);
  });

  it('a 404 means the message is gone', () => {
    expect(isGone(new ProviderRequestError('Gmail API 404: not found', 404, 'notFound'))).toBe(true);
    expect(isGone(new ProviderRequestError('Gmail API 400: bad', 400, ''))).toBe(false);
    expect(isGone(new Error('404'))).toBe(false);
  });
});
