/**
 * First run on embedded defaults: `pnpm start` with no tenant yet creates one and prints its API
 * key once, with copy-paste commands that create an SMTP mailer and send a first email. Only in
 * embedded mode (PGlite, one process per DATA_DIR, so no two replicas race here); with a server
 * database tenants are created with `pnpm cli tenant:create` or the admin API. The key is shown
 * only now: it is stored hashed.
 */
import type { Db, Logger } from '@mailyard/platform';
import { createTenant } from '@mailyard/store';
import type { GatewayConfig } from './settings';

export interface FirstRun {
  tenantId: string;
  apiKey: string;
}

export async function createFirstTenant(db: Db, logger: Logger): Promise<FirstRun> {
  const t = await createTenant(db, { name: 'default', tier: 'standard' });
  logger.info('first run: default tenant created', { tenant_id: t.id });
  return { tenantId: t.id, apiKey: t.apiKey };
}

/** The notice: the key, then shell lines that work as pasted once the SMTP line is edited. */
export function firstRunNotice(run: FirstRun, apiUrl: string): string {
  const auth = '-H "Authorization: Bearer $MAILYARD_API_KEY" -H "Content-Type: application/json"';
  return [
    '================================================================================',
    ' First run: created tenant "default". Its API key is shown ONCE, keep it:',
    '',
    `   ${run.apiKey}`,
    '',
    ' Send a first email: paste these lines in a shell (edit the SMTP line for your',
    " provider's relay or a local catcher; a private host needs MAILER_ALLOW_PRIVATE_HOSTS=1):",
    '================================================================================',
    `export MAILYARD_URL=${apiUrl} MAILYARD_API_KEY=${run.apiKey}`,
    'SMTP_HOST=smtp.example.com SMTP_PORT=587 SMTP_USER=me@example.com SMTP_PASS=app-password FROM=me@example.com TO=you@example.com',
    `MAILER_ID=$(curl -sS "$MAILYARD_URL/v1/mailer/smtp" ${auth} -d "{\\"name\\":\\"first\\",\\"email\\":\\"$FROM\\",\\"connection_type\\":\\"basic\\",\\"config\\":{\\"host\\":\\"$SMTP_HOST\\",\\"port\\":$SMTP_PORT,\\"username\\":\\"$SMTP_USER\\",\\"password\\":\\"$SMTP_PASS\\"}}" | node -pe 'JSON.parse(require("fs").readFileSync(0,"utf8")).mailer_id')`,
    `curl -sS "$MAILYARD_URL/v1/email/send" ${auth} -d "{\\"mailer_id\\":\\"$MAILER_ID\\",\\"from\\":{\\"email\\":\\"$FROM\\"},\\"to\\":[{\\"email\\":\\"$TO\\"}],\\"subject\\":\\"Hello from Mailyard\\",\\"content\\":[{\\"type\\":\\"text/plain\\",\\"value\\":\\"It works.\\"}]}"`,
    'curl -sS "$MAILYARD_URL/v1/email/logs" -H "Authorization: Bearer $MAILYARD_API_KEY"',
    '================================================================================',
  ].join('\n');
}

export const wantsFirstRun = (config: GatewayConfig, noTenants: boolean): boolean =>
  noTenants && !config.DATABASE_URL && !config.BOOTSTRAP_API_KEY;
