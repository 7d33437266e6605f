import { IdPrefix, type TenantTier, newId } from '@mailyard/contracts';
import type { Db, Queryable } from '@mailyard/platform';
import { displayPrefix, generateApiKey, hashApiKey } from './api-keys';

export interface Tenant {
  id: string;
  name: string;
  tier: TenantTier;
}

export interface IssuedKey {
  tenantId: string;
  keyId: string;
  apiKey: string;
}

export interface KeyOwner {
  tenantId: string;
  tier: TenantTier;
  keyId: string;
}

async function insertKey(q: Queryable, tenantId: string, apiKey: string): Promise<IssuedKey> {
  const keyId = newId(IdPrefix.apiKey);
  await q.query('INSERT INTO api_keys (id, tenant_id, key_hash, prefix) VALUES ($1, $2, $3, $4)', [
    keyId,
    tenantId,
    hashApiKey(apiKey),
    displayPrefix(apiKey),
  ]);
  return { tenantId, keyId, apiKey };
}

/** Creates a tenant and its first key (generated unless `apiKey` is given). */
export async function createTenant(
  db: Db,
  input: { name: string; tier: TenantTier; apiKey?: string },
): Promise<Tenant & IssuedKey> {
  const id = newId(IdPrefix.tenant);
  return db.transaction(async (tx) => {
    await tx.query('INSERT INTO tenants (id, name, tier) VALUES ($1, $2, $3)', [id, input.name, input.tier]);
    const key = await insertKey(tx, id, input.apiKey ?? generateApiKey());
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

/** Issues another key for an existing tenant; null when the tenant does not exist. */
export async function issueKey(db: Db, tenantId: string): Promise<IssuedKey | null> {
  if (!(await findTenant(db, tenantId))) return null;
  return insertKey(db, tenantId, generateApiKey());
}

/** Revokes a key; false when it does not exist or was already revoked. */
export async function revokeKey(db: Queryable, keyId: string): Promise<boolean> {
  const res = await db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [
    keyId,
  ]);
  return res.rowCount > 0;
}

export async function findKeyOwner(db: Queryable, apiKey: string): Promise<KeyOwner | null> {
  const { rows } = await db.query<KeyOwner>(
    `SELECT k.tenant_id AS "tenantId", t.tier, k.id AS "keyId"
       FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
      WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
    [hashApiKey(apiKey)],
  );
  return rows[0] ?? null;
}

/** Creates the bootstrap tenant with exactly `apiKey` unless that key already exists. */
export async function ensureBootstrapTenant(
  db: Db,
  apiKey: string,
  tier: TenantTier,
): Promise<{ created: boolean; tenantId: string }> {
  const existing = await db.query<{ tenant_id: string }>(
    'SELECT tenant_id FROM api_keys WHERE key_hash = $1',
    [hashApiKey(apiKey)],
  );
  if (existing.rows[0]) return { created: false, tenantId: existing.rows[0].tenant_id };
  const tenant = await createTenant(db, { name: 'bootstrap', tier, apiKey });
  return { created: true, tenantId: tenant.id };
}
