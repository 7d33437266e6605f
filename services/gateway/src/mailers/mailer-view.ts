import { type MailerView, mailerCapabilities } from '@mailyard/contracts';
import type { StoredMailer } from '@mailyard/store';
import { sparkPostCallback } from './sparkpost-mailer';

/**
 * A mailer as the API returns it: never a password, API key or token, only `password_set` /
 * `api_key_set` / the grant's scopes; a SparkPost mailer's callback URL and username (never its
 * password) under `callback`. `trackingBaseUrl`: the tracking service's public origin.
 */
export function toMailerView(m: StoredMailer, trackingBaseUrl: string): MailerView {
  let config: MailerView['config'] = {};
  let callback: MailerView['callback'];
  if (mailerCapabilities(m.configType).provider === 'sparkpost') {
    config = { base_url: m.config.base_url ?? null, api_key_set: m.passwordSet };
    callback = sparkPostCallback(trackingBaseUrl, m.id, m.callbackUsername ?? m.id);
  } else if (m.domain)
    config = { domain: m.domain.name, selector: m.domain.selector, verified: m.domain.verified };
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
    ...(callback ? { callback } : {}),
    ...(mailerCapabilities(m.configType).receives ? { webhook: m.webhook } : {}),
    created_at: m.createdAt.toISOString(),
    updated_at: m.updatedAt.toISOString(),
  };
}
