/**
 * Which mailers an authentication failure deactivates, and with which reason (docs/api/mailers.md
 * "States", docs/oauth.md "Sending": SMTP/provider authentication rejected, or the OAuth refresh token revoked; the
 * MAILER_DEACTIVATED event is written with the state change, libs/store deactivateMailer):
 *
 * - SMTP mailers (`smtp`, `basic_smtp`): their server refused the credentials:
 *   `provider_auth_error`.
 * - OAuth mailers: the failure's own reason (classify-provider-error.ts): `oauth_revoked` (the
 *   token source has deactivated the mailer already, in the same transaction as its event; a
 *   second call changes nothing, so there is never a second event) or `provider_auth_error`
 *   (the provider refused the account's access: the consumer deactivates it).
 * - SparkPost mailers: SparkPost refused the API key (401/403): `provider_auth_error`.
 * - Domain mailers: never (an auth failure there is the relay refusing the service's own
 *   credentials, an operator problem the consumer retries).
 *
 * `recordedDeactivation` is the same decision for an attempt recorded by an earlier delivery of
 * the command (from its SMTP_ERROR's failed_reason), when the process stopped before it
 * deactivated: a revoked grant was deactivated before the attempt was recorded, so only
 * `provider_auth_error` is left to do.
 */
import type { DeactivationReason, SendingMailer } from '@mailyard/contracts';
import { AUTH_REASON_PREFIX, type DeliveryFailure } from '@mailyard/providers';
import { OAUTH_REVOKED_REASON } from './transports/classify-provider-error';

export function deactivationReason(
  mailer: Pick<SendingMailer, 'kind'>,
  failure: Pick<DeliveryFailure, 'kind' | 'deactivation'>,
): DeactivationReason | null {
  if (failure.kind !== 'auth') return null;
  if (mailer.kind === 'smtp' || mailer.kind === 'sparkpost') return 'provider_auth_error';
  if (mailer.kind === 'oauth') return failure.deactivation ?? 'provider_auth_error';
  return null;
}

export function recordedDeactivation(
  mailer: Pick<SendingMailer, 'kind' | 'state'>,
  failedReason: string,
): DeactivationReason | null {
  if (mailer.state !== 'active' || !failedReason.startsWith(AUTH_REASON_PREFIX)) return null;
  if (mailer.kind === 'smtp' || mailer.kind === 'sparkpost') return 'provider_auth_error';
  if (mailer.kind === 'oauth') return failedReason === OAUTH_REVOKED_REASON ? null : 'provider_auth_error';
  return null;
}
