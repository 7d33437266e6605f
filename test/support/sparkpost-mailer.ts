/**
 * A SparkPost mailer row as the mailers API writes it (config_type `sparkpost`, id prefix
 * `sparkpost_`, the API key sealed, callback credentials issued with their password stored as its
 * digest: migration 0027), for the callback tests; the gateway's create route belongs to the
 * SparkPost mailer API.
 */
import { ulid } from '@mailyard/contracts';
import { type Db, type Sealer, digestSecret, issueSecret } from '@mailyard/platform';

export interface SparkPostMailerFixture {
  id: string;
  username: string;
  password: string;
}

export async function insertSparkPostMailer(
  db: Db,
  sealer: Sealer,
  tenantId: string,
): Promise<SparkPostMailerFixture> {
  const id = `sparkpost_${ulid()}`;
  const username = `sp_${ulid().toLowerCase()}`;
  const password = issueSecret();
  await db.query(
    `INSERT INTO mailers (id, tenant_id, config_type, connection_type, name, email, config, secret,
                          callback_username, callback_password_digest)
     VALUES ($1, $2, 'sparkpost', 'basic', 'SparkPost', 'news@brand.test', '{}'::jsonb, $3, $4, $5)`,
    [id, tenantId, sealer.seal('sparkpost-api-key'), username, digestSecret(password)],
  );
  return { id, username, password };
}
