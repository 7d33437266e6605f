import { IdPrefix, type TenantTier, newId } from '@mailyard/contracts';
import type { Db, Queryable } from '@mailyard/platform';
import { type IssuedKey, type NewKey, findKeyTenant, insertKey } from './api-keys';

export interface Tenant {
  id: string;
  name: string;
  tier: TenantTier;
}

/** Creates a tenant and its first key (generated unless `apiKey` is given). */
export async function createTenant(
  db: Db,
  input: { name: string; tier: TenantTier; apiKey?: string },
): Promise<Tenant & IssuedKey> {
  const id = newId(IdPrefix.tenant);
  return db.transaction(async (tx) => {
    await tx.query('INSERT INTO tenants (id, name, tier) VALUES ($1, $2, $3)', [id, input.name, input.tier]);
    const key = await insertKey(tx, id, input.apiKey ? { apiKey: input.apiKey } : {});
    return { id, name: input.name, tier: input.tier, ...key };
  });
}

export async function hasTenants(db: Queryable): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM tenants LIMIT 1');
  return rows.length > 0;
}

export async function findTenant(db: Queryable, tenantId: string): Promise<Tenant | null> {
  const { rows } = await db.query<Tenant>('SELECT id, name, tier FROM tenants WHERE id = $1', [tenantId]);
  return rows[0] ?? null;
}

/** Issues another key (scope `full` unless given) for an existing tenant; null when the tenant does not exist. */
export async function issueKey(db: Db, tenantId: string, key: NewKey = {}): Promise<IssuedKey | null> {
  if (!(await findTenant(db, tenantId))) return null;
  return insertKey(db, tenantId, key);
}

/** Creates the bootstrap tenant with exactly `apiKey` unless that key already exists. */
export async function ensureBootstrapTenant(
  db: Db,
  apiKey: string,
  tier: TenantTier,
): Promise<{ created: boolean; tenantId: string }> {
  const existing = await findKeyTenant(db, apiKey);
  if (existing) return { created: false, tenantId: existing };
  const tenant = await createTenant(db, { name: 'bootstrap', tier, apiKey });
  return { created: true, tenantId: tenant.id };
}
