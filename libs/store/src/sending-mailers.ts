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
  const state: SendingMailer['state'] = r.deleted_at ? 'deleted' : r.state;
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
  // What every mailer sending as an address (not a domain) carries.
  const sender = { id: r.id, tenantId: r.tenant_id, configType: r.config_type, state, email: r.email };
  if (mailerCapabilities(r.config_type).credential === 'oauth') {
    return {
      kind: 'oauth',
      ...sender,
      ...(r.oauth_provider ? { oauthProvider: OAUTH_SEND_PROVIDER[r.oauth_provider] } : {}),
    };
  }
  if (mailerCapabilities(r.config_type).provider === 'sparkpost') {
    return {
      kind: 'sparkpost',
      ...sender,
      sparkpost: {
        apiKey: r.secret ? sealer.openText(r.secret) : '',
        baseUrl: r.config.base_url ?? null,
      },
    };
  }
  return {
    kind: 'smtp',
    ...sender,
    smtp: {
      host: r.config.host ?? '',
      port: r.config.port ?? 587,
      secure: r.config.secure ?? 'Auto',
      username: r.config.username ?? '',
      password: r.secret ? sealer.openText(r.secret) : '',
    },
  };
}

/** A verified sending domain's DKIM key, unsealed (what the send service signs with). */
export interface DomainSigningKey {
  domain: string;
  selector: string;
  privateKeyPem: string;
}

/**
 * The DKIM key for mail from `fromDomain` sent through a provider mailer (SparkPost): the tenant's
 * verified, undeleted sending domain that is `fromDomain` itself or its closest parent (as a
 * domain mailer may send from its subdomains); null when the tenant has none.
 */
export async function verifiedDomainKey(
  db: Queryable,
  sealer: Sealer,
  tenantId: string,
  fromDomain: string,
): Promise<DomainSigningKey | null> {
  const labels = fromDomain.toLowerCase().replace(/\.$/, '').split('.');
  const candidates = labels.slice(0, -1).map((_, i) => labels.slice(i).join('.'));
  if (candidates.length === 0) return null;
  const { rows } = await db.query<{ name: string; selector: string; dkim_private_key: Uint8Array }>(
    `SELECT name, selector, dkim_private_key FROM domains
      WHERE tenant_id = $1 AND name = ANY($2::text[]) AND verified AND deleted_at IS NULL
      ORDER BY length(name) DESC LIMIT 1`,
    [tenantId, candidates],
  );
  const r = rows[0];
  if (!r) return null;
  return { domain: r.name, selector: r.selector, privateKeyPem: sealer.openText(r.dkim_private_key) };
}
