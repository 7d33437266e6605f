/**
 * Every stored row of one tenant, as sorted text lines: the rows of each table with a tenant_id
 * column (found in the catalogue, so a table added later is included), the tenant itself, the
 * attempts of its webhook deliveries and its outbox messages. Two snapshots are equal only when
 * nothing of the tenant was written in between (the tenant isolation table compares them).
 */
import type { Queryable } from '@mailyard/platform';

const text = (row: Record<string, unknown>) =>
  JSON.stringify(row, (_k, v) =>
    v instanceof Uint8Array || (v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer')
      ? Buffer.from(v as Uint8Array).toString('hex')
      : v,
  );

export async function tenantTables(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.columns
      WHERE column_name = 'tenant_id' AND table_schema = current_schema()
      ORDER BY table_name`,
  );
  return rows.map((r) => r.table_name);
}

export async function tenantRows(db: Queryable, tenantId: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  const read = async (name: string, sql: string) => {
    const { rows } = await db.query<Record<string, unknown>>(sql, [tenantId]);
    out[name] = rows.map(text).sort();
  };
  for (const table of await tenantTables(db))
    await read(table, `SELECT * FROM "${table}" WHERE tenant_id = $1`);
  await read('tenants', 'SELECT * FROM tenants WHERE id = $1');
  await read(
    'webhook_delivery_attempts',
    `SELECT a.* FROM webhook_delivery_attempts a
       JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.tenant_id = $1`,
  );
  await read('outbox', `SELECT * FROM outbox WHERE message->>'tenant_id' = $1`);
  return out;
}
