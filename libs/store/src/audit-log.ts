/**
 * The audit log (table `audit_log`, migration 0030): one row per change made through the /v1
 * API, written by the gateway's audit step (services/gateway/src/audit) after the change
 * succeeded. Rows hold ids and the client address only, never a secret or a request body.
 * Ids are ULIDs made with `at` from the same clock, so id order is time order; pages walk ids
 * newest first. Retention expires rows by `at` (RETENTION_AUDIT).
 */
import { type AuditEntry, type AuditQuery, ulid } from '@mailyard/contracts';
import type { Queryable } from '@mailyard/platform';
import { type Page, pageAfter, toPage } from './cursor';
import { SqlFilter } from './sql-filter';

export interface AuditRecord {
  tenantId: string;
  keyId: string | null;
  action: AuditEntry['action'];
  resource: AuditEntry['resource'];
  resourceId: string | null;
  ip: string | null;
}

type AuditRow = Omit<AuditEntry, 'at'> & { id: string; at: Date };

export const auditLog = {
  async record(db: Queryable, r: AuditRecord): Promise<void> {
    const at = new Date();
    await db.query(
      `INSERT INTO audit_log (id, tenant_id, at, key_id, action, resource, resource_id, ip)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [ulid(), r.tenantId, at, r.keyId, r.action, r.resource, r.resourceId, r.ip],
    );
  },

  /** One page of the tenant's entries, newest first. Throws InvalidCursorError for a foreign token. */
  async list(db: Queryable, tenantId: string, q: AuditQuery): Promise<Page<AuditEntry>> {
    const before = pageAfter(q.pageToken);
    const f = new SqlFilter('tenant_id', tenantId);
    const { params } = f;
    f.timeRange('at', q.startDate, q.endDate);
    if (q.action !== undefined) f.add(q.action, (p) => `action = ${p}`);
    if (before !== null) f.add(before, (p) => `id < ${p}`);
    params.push(q.pageSize + 1);
    const { rows } = await db.query<AuditRow>(
      `SELECT id, at, key_id, action, resource, resource_id, ip FROM audit_log
        WHERE ${f.sql} ORDER BY id DESC LIMIT $${params.length}`,
      params,
    );
    const { items, nextCursor } = toPage(rows, q.pageSize, (r) => r.id);
    return { items: items.map(({ id: _id, at, ...r }) => ({ at: at.toISOString(), ...r })), nextCursor };
  },
};
