import { AUTH_REASON_PREFIX } from '@mailyard/providers';
import { deactivationReason, recordedDeactivation } from './mailer-deactivation';
import { OAUTH_REVOKED_REASON } from './transports/classify-provider-error';

const smtp = { kind: 'smtp' as const, state: 'active' as const };
const oauth = { kind: 'oauth' as const, state: 'active' as const };
const domain = { kind: 'domain' as const, state: 'active' as const };
const sparkpost = { kind: 'sparkpost' as const, state: 'active' as const };

describe('deactivationReason', () => {
  it('deactivates SMTP mailers whose server refused the login with provider_auth_error', () => {
    expect(deactivationReason(smtp, { kind: 'auth' })).toBe('provider_auth_error');
  });

  it('deactivates SparkPost mailers whose key SparkPost refused with provider_auth_error', () => {
    expect(deactivationReason(sparkpost, { kind: 'auth' })).toBe('provider_auth_error');
    expect(deactivationReason(sparkpost, { kind: 'temporary' })).toBeNull();
    expect(recordedDeactivation(sparkpost, `${AUTH_REASON_PREFIX} failed: SparkPost refused (401)`)).toBe(
      'provider_auth_error',
    );
  });

  it("deactivates OAuth mailers with the failure's own reason", () => {
    expect(deactivationReason(oauth, { kind: 'auth', deactivation: 'oauth_revoked' })).toBe('oauth_revoked');
    expect(deactivationReason(oauth, { kind: 'auth', deactivation: 'provider_auth_error' })).toBe(
      'provider_auth_error',
    );
    expect(deactivationReason(oauth, { kind: 'auth' })).toBe('provider_auth_error');
  });

  it('never deactivates for other failures, nor domain mailers', () => {
    expect(deactivationReason(smtp, { kind: 'temporary' })).toBeNull();
    expect(deactivationReason(oauth, { kind: 'permanent' })).toBeNull();
    expect(deactivationReason(domain, { kind: 'auth' })).toBeNull();
  });
});

describe('recordedDeactivation', () => {
  const authReason = `${AUTH_REASON_PREFIX} failed: Gmail API refused the mailer's access (403)`;

  it('finishes the deactivation an earlier delivery did not get to', () => {
    expect(recordedDeactivation(smtp, `${AUTH_REASON_PREFIX} failed: 535 5.7.8`)).toBe('provider_auth_error');
    expect(recordedDeactivation(oauth, authReason)).toBe('provider_auth_error');
  });

  it('leaves a revoked grant alone: the token source deactivated it before the attempt was recorded', () => {
    expect(recordedDeactivation(oauth, OAUTH_REVOKED_REASON)).toBeNull();
  });

  it('does nothing for a mailer no longer active, other failures, or domain mailers', () => {
    expect(recordedDeactivation({ kind: 'oauth', state: 'deactivated' }, authReason)).toBeNull();
    expect(recordedDeactivation({ kind: 'smtp', state: 'disabled' }, authReason)).toBeNull();
    expect(recordedDeactivation(oauth, 'Temporary failure: Gmail API is unavailable')).toBeNull();
    expect(recordedDeactivation(domain, authReason)).toBeNull();
  });
});
