import { generateKeyPairSync } from 'node:crypto';
import { type ConfigType, IdPrefix, type IdPrefixValue, type MailerState, newId } from '@mailyard/contracts';
import type { ServiceContext } from '@mailyard/platform';

/**
 * Mailers for send tests, written straight into `mailers`/`domains` (secrets sealed with the
 * context's sealer) the way the domains/mailers API stores them. Kept in this one file so the
 * tests can switch to that API once it exists.
 */

let dkim: { publicKey: string; privateKey: string } | undefined;
function dkimKeys() {
  dkim ??= generateKeyPairSync('rsa', {
    modulusLength: 1024,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return dkim;
}

export interface MailerOptions {
  state?: MailerState;
  deleted?: boolean;
}

/** A sending domain and its `domain_` mailer. `domain` is stored as given (use the ASCII form). */
export async function addDomainMailer(
  ctx: ServiceContext,
  tenantId: string,
  domain: string,
  opts: MailerOptions & { verified?: boolean } = {},
): Promise<string> {
  const id = newId(IdPrefix.domain);
  const deletedAt = opts.deleted ? new Date() : null;
  const keys = dkimKeys();
  await ctx.db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO mailers (id, tenant_id, config_type, connection_type, name, state, deleted_at)
       VALUES ($1, $2, 'domain', 'domain', $3, $4, $5)`,
      [id, tenantId, domain, opts.state ?? 'active', deletedAt],
    );
    await tx.query(
      `INSERT INTO domains (id, tenant_id, name, unicode_name, selector, dkim_public_key, dkim_private_key, verified, verified_at, deleted_at)
       VALUES ($1, $2, $3, $3, 'mailyard', $4, $5, $6, $7, $8)`,
      [
        id,
        tenantId,
        domain,
        keys.publicKey,
        ctx.sealer.seal(keys.privateKey),
        opts.verified ?? true,
        opts.verified === false ? null : new Date(),
        deletedAt,
      ],
    );
  });
  return id;
}

const PREFIX: Partial<Record<ConfigType, IdPrefixValue>> = {
  smtp: IdPrefix.smtp,
  basic_smtp: IdPrefix.basicSmtp,
  oauth_smtp: IdPrefix.oauthSmtp,
  basic_imap: IdPrefix.basicImap,
  oauth_imap: IdPrefix.oauthImap,
};

/** An SMTP or IMAP mailer with a sealed password. */
export async function addServerMailer(
  ctx: ServiceContext,
  tenantId: string,
  opts: MailerOptions & { configType?: ConfigType; email?: string } = {},
): Promise<string> {
  const configType = opts.configType ?? 'basic_smtp';
  const id = newId(PREFIX[configType] ?? IdPrefix.smtp);
  const imap = configType.includes('imap') && !configType.includes('smtp');
  await ctx.db.query(
    `INSERT INTO mailers (id, tenant_id, config_type, connection_type, name, email, state, config, secret, deleted_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10)`,
    [
      id,
      tenantId,
      configType,
      configType.startsWith('oauth') ? 'oauth' : 'basic',
      `${configType} mailer`,
      opts.email ?? 'me@smtp.test',
      opts.state ?? 'active',
      JSON.stringify({
        host: '127.0.0.1',
        port: imap ? 993 : 2525,
        secure: imap ? 'SSL' : 'None',
        username: 'me',
      }),
      ctx.sealer.seal('password'),
      opts.deleted ? new Date() : null,
    ],
  );
  return id;
}
