/**
 * API keys (table `api_keys`): issued secrets (libs/platform secrets/issued-secret.ts) stored as
 * their SHA-256 digest with a readable prefix, a name and a scope (`full`, `send`, `read`; see
 * docs/api/keys.md). A key is revoked (revoked_at set), never deleted, so audit entries keep
 * naming a real key id. `last_used_at` is written in batches (markKeysUsed), not per request.
 */
import { type ApiKeyView, IdPrefix, type KeyScope, type TenantTier, newId } from '@mailyard/contracts';
import { type Db, type Queryable, digestSecret, issueSecret } from '@mailyard/platform';

/** Readable prefix that marks a string as a Mailyard API key (and helps secret scanners). */
export const API_KEY_PREFIX = 'myk_';

/** A new key: the prefix plus 256 bits of randomness, base64url. */
export const generateApiKey = (): string => issueSecret(API_KEY_PREFIX);

/** What is stored and shown for a key: its first characters. */
export function displayPrefix(key: string): string {
  return key.slice(0, API_KEY_PREFIX.length + 6);
}

export interface IssuedKey {
  tenantId: string;
  keyId: string;
  apiKey: string;
}

/** Who a request's key belongs to and what it may do. */
export interface KeyOwner {
  tenantId: string;
  tier: TenantTier;
  keyId: string;
  scope: KeyScope;
}

export interface NewKey {
  apiKey?: string;
  name?: string;
  scope?: KeyScope;
}

/** Inserts a key (generated unless `apiKey` is given) for `tenantId`. */
export async function insertKey(q: Queryable, tenantId: string, key: NewKey = {}): Promise<IssuedKey> {
  const keyId = newId(IdPrefix.apiKey);
  const apiKey = key.apiKey ?? generateApiKey();
  await q.query(
    'INSERT INTO api_keys (id, tenant_id, key_hash, prefix, name, scope) VALUES ($1, $2, $3, $4, $5, $6)',
    [keyId, tenantId, digestSecret(apiKey), displayPrefix(apiKey), key.name ?? '', key.scope ?? 'full'],
  );
  return { tenantId, keyId, apiKey };
}

/** The owner of a live (not revoked) key, or null. */
export async function findKeyOwner(db: Queryable, apiKey: string): Promise<KeyOwner | null> {
  const { rows } = await db.query<KeyOwner>(
    `SELECT k.tenant_id AS "tenantId", t.tier, k.id AS "keyId", k.scope
       FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
      WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
    [digestSecret(apiKey)],
  );
  return rows[0] ?? null;
}

/** The tenant of a key, revoked or not (bootstrap: is this exact key known already?). */
export async function findKeyTenant(db: Queryable, apiKey: string): Promise<string | null> {
  const { rows } = await db.query<{ tenant_id: string }>(
    'SELECT tenant_id FROM api_keys WHERE key_hash = $1',
    [digestSecret(apiKey)],
  );
  return rows[0]?.tenant_id ?? null;
}

/** Revokes a key of any tenant (admin API); false when it does not exist or was already revoked. */
export async function revokeKey(db: Queryable, keyId: string): Promise<boolean> {
  const res = await db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [
    keyId,
  ]);
  return res.rowCount > 0;
}

/** Sets last_used_at = now() on these keys: one statement for every key used since the last call. */
export async function markKeysUsed(db: Queryable, keyIds: readonly string[]): Promise<void> {
  if (keyIds.length === 0) return;
  await db.query('UPDATE api_keys SET last_used_at = now() WHERE id = ANY($1::text[])', [keyIds]);
}

interface KeyRow {
  id: string;
  name: string;
  scope: KeyScope;
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
}

/** The tenant's keys as the API manages them (docs/api/keys.md). */
export const tenantKeys = {
  /** The live keys, oldest first. */
  async list(db: Queryable, tenantId: string): Promise<ApiKeyView[]> {
    const { rows } = await db.query<KeyRow>(
      `SELECT id, name, scope, prefix, created_at, last_used_at FROM api_keys
        WHERE tenant_id = $1 AND revoked_at IS NULL ORDER BY id`,
      [tenantId],
    );
    return rows.map((r) => ({
      key_id: r.id,
      name: r.name,
      scope: r.scope,
      prefix: r.prefix,
      created_at: r.created_at.toISOString(),
      last_used_at: r.last_used_at ? r.last_used_at.toISOString() : null,
    }));
  },

  /** A new key; 'limit' when the tenant already holds `max` live keys. */
  async create(
    db: Db,
    tenantId: string,
    key: { name: string; scope: KeyScope },
    max: number,
  ): Promise<IssuedKey | 'limit'> {
    return db.transaction(async (tx) => {
      // Serialises key changes of one tenant: the count and the last-full-key rule hold under races.
      await tx.query('SELECT id FROM tenants WHERE id = $1 FOR UPDATE', [tenantId]);
      const { rows } = await tx.query<{ n: number | string }>(
        'SELECT count(*) AS n FROM api_keys WHERE tenant_id = $1 AND revoked_at IS NULL',
        [tenantId],
      );
      if (Number(rows[0]?.n ?? 0) >= max) return 'limit';
      return insertKey(tx, tenantId, key);
    });
  },

  /**
   * Revokes one of the tenant's live keys: 'not_found' (unknown, revoked, or another tenant's),
   * 'last_full' (it is the tenant's only live `full` key: the tenant would lose key management).
   */
  async revoke(db: Db, tenantId: string, keyId: string): Promise<'revoked' | 'not_found' | 'last_full'> {
    return db.transaction(async (tx) => {
      await tx.query('SELECT id FROM tenants WHERE id = $1 FOR UPDATE', [tenantId]);
      const { rows } = await tx.query<{ scope: KeyScope; full_keys: number | string }>(
        `SELECT scope, (SELECT count(*) FROM api_keys f
                          WHERE f.tenant_id = $1 AND f.revoked_at IS NULL AND f.scope = 'full') AS full_keys
           FROM api_keys WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL`,
        [tenantId, keyId],
      );
      const row = rows[0];
      if (!row) return 'not_found';
      if (row.scope === 'full' && Number(row.full_keys) <= 1) return 'last_full';
      await tx.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [keyId]);
      return 'revoked';
    });
  },
};
