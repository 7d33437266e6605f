import {
  type ConfigType,
  type MailerState,
  OAUTH_SEND_PROVIDER,
  type OAuthProviderName,
  type SendingMailer,
  type SmtpSecureMode,
  mailerCapabilities,
} from '@mailyard/contracts';
import type { Queryable, Sealer } from '@mailyard/platform';

type Row = {
  id: string;
  tenant_id: string;
  config_type: ConfigType;
  state: MailerState;
  email: string;
  config: { host?: string; port?: number; secure?: SmtpSecureMode; username?: string; base_url?: string };
  secret: Uint8Array | null;
  deleted_at: Date | null;
  domain: string | null;
  verified: boolean | null;
  selector: string | null;
  dkim_private_key: Uint8Array | null;
  custom_args: Record<string, unknown> | null;
  oauth_provider: OAuthProviderName | null;
};

/**
 * Loads a mailer as the send service needs it, deleted ones included (state `deleted`), so a
 * copy accepted before the deletion can be rejected by policy. Null when it never existed
 * for this tenant. An OAuth mailer carries only its grant's provider (its send transport): the
 * tokens stay in oauth-grants.ts, read by the token source at send time.
 */
export async function loadSendingMailer(
  db: Queryable,
  sealer: Sealer,
  tenantId: string,
  mailerId: string,
): Promise<SendingMailer | null> {
  const { rows } = await db.query<Row>(
    `SELECT m.id, m.tenant_id, m.config_type, m.state, m.email, m.config, m.secret, m.deleted_at,
            d.name AS domain, d.verified, d.selector, d.dkim_private_key, d.custom_args,
            g.provider AS oauth_provider
       FROM mailers m LEFT JOIN domains d ON d.id = m.id
       LEFT JOIN oauth_grants g ON g.mailer_id = m.id AND g.tenant_id = m.tenant_id
      WHERE m.tenant_id = $1 AND m.id = $2`,
    [tenantId, mailerId],
  );
  const r = rows[0];
  if (!r) return null;
  const state = r.deleted_at ? 'deleted' : r.state;
  if (r.config_type === 'domain') {
    return {
      kind: 'domain',
      id: r.id,
      tenantId: r.tenant_id,
      configType: 'domain',
      state,
      domain: r.domain ?? '',
      verified: r.verified === true,
      selector: r.selector ?? '',
      dkimPrivateKeyPem: r.dkim_private_key ? sealer.openText(r.dkim_private_key) : '',
      customArgs: r.custom_args,
    };
  }
  if (mailerCapabilities(r.config_type).credential === 'oauth') {
    return {
      kind: 'oauth',
      id: r.id,
      tenantId: r.tenant_id,
      configType: r.config_type,
      state,
      email: r.email,
      ...(r.oauth_provider ? { oauthProvider: OAUTH_SEND_PROVIDER[r.oauth_provider] } : {}),
    };
  }
  if (mailerCapabilities(r.config_type).provider === 'sparkpost') {
    return {
      kind: 'sparkpost',
      id: r.id,
      tenantId: r.tenant_id,
      configType: r.config_type,
      state,
      email: r.email,
      sparkpost: {
        apiKey: r.secret ? sealer.openText(r.secret) : '',
        baseUrl: r.config.base_url ?? null,
      },
    };
  }
  return {
    kind: 'smtp',
    id: r.id,
    tenantId: r.tenant_id,
    configType: r.config_type,
    state,
    email: r.email,
    smtp: {
      host: r.config.host ?? '',
      port: r.config.port ?? 587,
      secure: r.config.secure ?? 'Auto',
      username: r.config.username ?? '',
      password: r.secret ? sealer.openText(r.secret) : '',
    },
  };
}
