/**
 * POST /v1/oauth/activate {mailer_id, active?}: the manual switch of an OAuth mailer (docs/oauth.md
 * "Activation"; no event either way). `active: true` enables a disabled mailer; a
 * deactivated one (its grant was revoked) is re-activated only by re-authenticating through
 * POST /v1/oauth/login (422). `active: false` disables an active mailer; a deactivated one stays
 * as it is (409).
 */
import { MailerErrorText, type MailerState, OAuthErrorText } from '@mailyard/contracts';
import { type Db, HttpError, conflict, notFound } from '@mailyard/platform';
import { mailers } from '@mailyard/store';

export interface Activation {
  state: MailerState;
  message: string;
}

export async function activateOAuthMailer(
  db: Db,
  tenantId: string,
  mailerId: string,
  active: boolean,
): Promise<Activation> {
  const mailer = await mailers.get(db, tenantId, mailerId);
  if (!mailer) throw notFound(MailerErrorText.mailerNotFound);
  if (mailer.connectionType !== 'oauth') throw new HttpError(422, OAuthErrorText.notOAuthMailer);
  const [from, to]: [MailerState, MailerState] = active ? ['disabled', 'active'] : ['active', 'disabled'];
  const before = await mailers.setStateManually(db, tenantId, mailerId, [from], to);
  if (before === null) throw notFound(MailerErrorText.mailerNotFound);
  if (before === 'deactivated') {
    if (active) throw new HttpError(422, OAuthErrorText.deactivatedActivate);
    throw conflict(OAuthErrorText.deactivatedActivate);
  }
  if (before === to)
    return { state: to, message: active ? 'Mailer was already active' : 'Mailer was already disabled' };
  return { state: to, message: active ? 'Mailer enabled' : 'Mailer disabled' };
}
