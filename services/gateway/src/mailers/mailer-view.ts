import { type MailerView, mailerCapabilities } from '@mailyard/contracts';
import type { StoredMailer } from '@mailyard/store';

/** A mailer as the API returns it: never a password or token, only `password_set` / the grant's scopes. */
export function toMailerView(m: StoredMailer): MailerView {
  let config: MailerView['config'] = {};
  if (m.domain) config = { domain: m.domain.name, selector: m.domain.selector, verified: m.domain.verified };
  else if (m.oauth) {
    config = {
      provider: m.oauth.provider,
      app_id: m.oauth.appId,
      scopes: m.oauth.scopes,
      token_expires_at: m.oauth.accessExpiresAt?.toISOString() ?? null,
    };
  } else if (m.connectionType === 'basic') {
    config = {
      host: m.config.host ?? '',
      port: m.config.port ?? 0,
      username: m.config.username ?? '',
      secure: m.config.secure ?? 'Auto',
      password_set: m.passwordSet,
    };
  }
  return {
    mailer_id: m.id,
    name: m.name,
    email: m.email,
    config_type: m.configType,
    connection_type: m.connectionType,
    state: m.state,
    state_reason: m.stateReason,
    config,
    ...(mailerCapabilities(m.configType).receives ? { webhook: m.webhook } : {}),
    created_at: m.createdAt.toISOString(),
    updated_at: m.updatedAt.toISOString(),
  };
}
