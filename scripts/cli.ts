/**
 * `pnpm cli <command>`: tenant and key issuance against the configured database, the same
 * operations as the admin API.
 *   tenant:create <name> [standard|enterprise]   prints tenant id, key id and the API key
 *   key:create <tenant_id>                        issues another key
 *   key:revoke <key_id>                           revokes a key
 *   tail [--event ...] [--ref-id ...] [--email ...] the account's email events live (cli-tail.ts;
 *                                                 over HTTP with an API key, no database)
 */
import { CreateTenantSchema } from '@mailyard/contracts';
import { ConfigError, loadConfig, migrate, openDatabase } from '@mailyard/platform';
import { createTenant, issueKey, revokeKey } from '@mailyard/store';
import { TAIL_USAGE, tail } from './cli-tail';

const USAGE = `usage: pnpm cli tenant:create <name> [standard|enterprise] | key:create <tenant_id> | key:revoke <key_id> | tail ...
${TAIL_USAGE}`;

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === 'tail') return tail(args);
  const db = await openDatabase(loadConfig());
  try {
    await migrate(db);
    switch (command) {
      case 'tenant:create': {
        const parsed = CreateTenantSchema.safeParse({ name: args[0], tier: args[1] });
        if (!parsed.success) return fail(parsed.error.issues[0]?.message ?? USAGE);
        const t = await createTenant(db, parsed.data);
        return print({ tenant_id: t.id, tier: t.tier, key_id: t.keyId, api_key: t.apiKey });
      }
      case 'key:create': {
        if (!args[0]) return fail(USAGE);
        const key = await issueKey(db, args[0]);
        return key
          ? print({ tenant_id: key.tenantId, key_id: key.keyId, api_key: key.apiKey })
          : fail('Tenant not found');
      }
      case 'key:revoke': {
        if (!args[0]) return fail(USAGE);
        return (await revokeKey(db, args[0])) ? print({ revoked: args[0] }) : fail('API key not found');
      }
      default:
        return fail(USAGE);
    }
  } finally {
    await db.close();
  }
}

function print(value: unknown): number {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  return 0;
}

function fail(message: string): number {
  process.stderr.write(`${message}\n`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(
      `${err instanceof ConfigError ? err.message : `error: ${(err as Error).message}`}\n`,
    );
    process.exit(1);
  },
);
