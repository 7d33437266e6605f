/**
 * The mailer host check of the API (docs/architecture.md "Outbound connections"): a host is resolved with the
 * project's resolver and refused (422) when it does not resolve or any of its addresses is not
 * public, unless MAILER_ALLOW_PRIVATE_HOSTS allows private ones. Run at create, at every config
 * change and on enable; the connection itself checks again (guarded connect) with the address it
 * connects to. `details` names the host, never what it resolved to.
 */
import { MailerErrorText } from '@mailyard/contracts';
import {
  type DnsConfig,
  type GuardOptions,
  HttpError,
  OutboundTargetError,
  resolveGuarded,
} from '@mailyard/platform';

export interface HostGuardConfig extends DnsConfig {
  MAILER_ALLOW_PRIVATE_HOSTS: boolean;
}

/** The guard options of mailer connections under `config`. */
export const mailerGuard = (config: HostGuardConfig): GuardOptions => ({
  allowPrivate: config.MAILER_ALLOW_PRIVATE_HOSTS,
  dns: config,
});

/** The 422 of a refused target, or null for any other error. */
export function targetRefusal(err: unknown): HttpError | null {
  if (!(err instanceof OutboundTargetError) || err.code === 'ETARGET_CONNECT') return null;
  const error =
    err.code === 'ETARGET_PRIVATE' ? MailerErrorText.hostNotAllowed : MailerErrorText.hostUnresolved;
  return new HttpError(422, error, { details: err.message });
}

/** Throws the 422 when a mailer may not connect to `host`. */
export async function assertMailerHost(host: string, config: HostGuardConfig): Promise<void> {
  try {
    await resolveGuarded(host, mailerGuard(config));
  } catch (err) {
    throw targetRefusal(err) ?? err;
  }
}
