import {
  BusMessages,
  type DomainDnsRecord,
  type DomainVerificationEvent,
  IdPrefix,
  type MailerState,
  newId,
} from '@mailyard/contracts';
import { type Db, type Queryable, writeOutbox } from '@mailyard/platform';
import { type Page, type PageRequest, listPage } from './cursor';

export class DuplicateDomainError extends Error {
  override name = 'DuplicateDomainError';
}

/** A sending domain as stored (the DKIM private key stays sealed in the database). */
export interface StoredDomain {
  id: string;
  tenantId: string;
  name: string;
  unicodeName: string;
  selector: string;
  dkimPublicKey: string;
  customArgs: Record<string, unknown> | null;
  isTenantDomain: boolean;
  isTenantSubdomain: boolean;
  sharedWithSubaccounts: boolean;
  ips: string[];
  verified: boolean;
  records: DomainDnsRecord[];
  verifiedAt: Date | null;
  lastCheckedAt: Date | null;
  nextCheckAt: Date | null;
  unverifiedSince: Date | null;
  createdAt: Date;
  updatedAt: Date;
  /** State of the domain's mailer. */
  state: MailerState;
}

export interface NewDomain {
  name: string;
  unicodeName: string;
  selector: string;
  dkimPublicKey: string;
  /** The DKIM private key, already sealed. */
  sealedPrivateKey: Buffer;
  customArgs: Record<string, unknown> | null;
  isTenantDomain: boolean;
  isTenantSubdomain: boolean;
  sharedWithSubaccounts: boolean;
  ips: string[];
  records: DomainDnsRecord[];
  createdAt: Date;
  nextCheckAt: Date | null;
}

/** When the next automatic check runs and since when the domain is unverified. */
export interface CheckSchedule {
  nextCheckAt: Date | null;
  unverifiedSince: Date | null;
}

export interface SavedCheck {
  domain: StoredDomain;
  /** `verified` differs from before the check. */
  changed: boolean;
  /** A DOMAIN_VERIFICATION event was written to the outbox. */
  emitted: boolean;
}

type Row = {
  id: string;
  tenant_id: string;
  name: string;
  unicode_name: string;
  selector: string;
  dkim_public_key: string;
  custom_args: Record<string, unknown> | null;
  is_tenant_domain: boolean;
  is_tenant_subdomain: boolean;
  shared_with_subaccounts: boolean;
  ips: string[];
  verified: boolean;
  records: DomainDnsRecord[];
  verified_at: Date | null;
  last_checked_at: Date | null;
  next_check_at: Date | null;
  unverified_since: Date | null;
  created_at: Date;
  updated_at: Date;
  state: MailerState;
};

const COLUMNS = `d.id, d.tenant_id, d.name, d.unicode_name, d.selector, d.dkim_public_key, d.custom_args,
  d.is_tenant_domain, d.is_tenant_subdomain, d.shared_with_subaccounts, d.ips, d.verified, d.records,
  d.verified_at, d.last_checked_at, d.next_check_at, d.unverified_since, d.created_at, d.updated_at, m.state`;
const FROM = 'FROM domains d JOIN mailers m ON m.id = d.id';

const toDomain = (r: Row): StoredDomain => ({
  id: r.id,
  tenantId: r.tenant_id,
  name: r.name,
  unicodeName: r.unicode_name,
  selector: r.selector,
  dkimPublicKey: r.dkim_public_key,
  customArgs: r.custom_args,
  isTenantDomain: r.is_tenant_domain,
  isTenantSubdomain: r.is_tenant_subdomain,
  sharedWithSubaccounts: r.shared_with_subaccounts,
  ips: r.ips,
  verified: r.verified,
  records: r.records,
  verifiedAt: r.verified_at,
  lastCheckedAt: r.last_checked_at,
  nextCheckAt: r.next_check_at,
  unverifiedSince: r.unverified_since,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  state: r.state,
});

export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === '23505';
}

/** The DOMAIN_VERIFICATION webhook body (docs/events.md, `DOMAIN_VERIFICATION`); webhook_id is filled by the dispatcher. */
export function domainVerificationEvent(d: StoredDomain): DomainVerificationEvent {
  return {
    event: 'DOMAIN_VERIFICATION',
    details: {
      domain: d.name,
      verified: d.verified,
      mailer_id: d.id,
      custom_args: d.customArgs ?? {},
      webhook_id: '',
    },
  };
}

/** Sending domains, scoped to one tenant (another tenant's domain behaves as absent). Each is also a mailer. */
export const domains = {
  async create(db: Db, tenantId: string, input: NewDomain): Promise<StoredDomain> {
    const id = newId(IdPrefix.domain);
    try {
      return await db.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO mailers (id, tenant_id, config_type, connection_type, name, email, created_at, updated_at)
           VALUES ($1, $2, 'domain', 'domain', $3, '', $4, $4)`,
          [id, tenantId, input.name, input.createdAt],
        );
        await tx.query(
          `INSERT INTO domains (id, tenant_id, name, unicode_name, selector, dkim_public_key, dkim_private_key, custom_args,
             is_tenant_domain, is_tenant_subdomain, shared_with_subaccounts, ips, records, next_check_at, unverified_since,
             created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12::jsonb, $13::jsonb, $14, $15, $15, $15)`,
          [
            id,
            tenantId,
            input.name,
            input.unicodeName,
            input.selector,
            input.dkimPublicKey,
            input.sealedPrivateKey,
            input.customArgs === null ? null : JSON.stringify(input.customArgs),
            input.isTenantDomain,
            input.isTenantSubdomain,
            input.sharedWithSubaccounts,
            JSON.stringify(input.ips),
            JSON.stringify(input.records),
            input.nextCheckAt,
            input.createdAt,
          ],
        );
        const { rows } = await tx.query<Row>(`SELECT ${COLUMNS} ${FROM} WHERE d.id = $1`, [id]);
        return toDomain(rows[0]!);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new DuplicateDomainError(input.name);
      throw err;
    }
  },

  /** By ASCII name; deleted domains are absent. */
  async get(db: Queryable, tenantId: string, name: string): Promise<StoredDomain | null> {
    const { rows } = await db.query<Row>(
      `SELECT ${COLUMNS} ${FROM} WHERE d.tenant_id = $1 AND d.name = $2 AND d.deleted_at IS NULL`,
      [tenantId, name],
    );
    return rows[0] ? toDomain(rows[0]) : null;
  },

  list(
    db: Queryable,
    tenantId: string,
    page: PageRequest,
  ): Promise<Page<StoredDomain> & { totalCount: number }> {
    const sql = {
      page: `SELECT ${COLUMNS} ${FROM} WHERE d.tenant_id = $1 AND d.deleted_at IS NULL AND d.id > $2 ORDER BY d.id LIMIT $3`,
      count: 'SELECT count(*) AS n FROM domains WHERE tenant_id = $1 AND deleted_at IS NULL',
    };
    return listPage(db, tenantId, page, sql, toDomain);
  },

  /**
   * Deletes the domain and its mailer: both rows stay (marked deleted, so sends accepted before
   * read the mailer as `deleted`), the sealed DKIM private key is wiped. False when absent.
   */
  async delete(db: Db, tenantId: string, name: string): Promise<boolean> {
    return db.transaction(async (tx) => {
      const { rows } = await tx.query<{ id: string }>(
        `UPDATE domains SET deleted_at = now(), updated_at = now(), dkim_private_key = NULL, next_check_at = NULL
          WHERE tenant_id = $1 AND name = $2 AND deleted_at IS NULL RETURNING id`,
        [tenantId, name],
      );
      if (!rows[0]) return false;
      await tx.query(
        'UPDATE mailers SET deleted_at = now(), updated_at = now() WHERE id = $1 AND tenant_id = $2',
        [rows[0].id, tenantId],
      );
      return true;
    });
  },

  /** Domains of every tenant whose automatic check is due at `now`, oldest due first. */
  async due(
    db: Queryable,
    now: Date,
    limit: number,
  ): Promise<Array<{ id: string; tenantId: string; name: string }>> {
    const { rows } = await db.query<{ id: string; tenant_id: string; name: string }>(
      `SELECT id, tenant_id, name FROM domains
        WHERE deleted_at IS NULL AND next_check_at IS NOT NULL AND next_check_at <= $1
        ORDER BY next_check_at, id LIMIT $2`,
      [now, limit],
    );
    return rows.map((r) => ({ id: r.id, tenantId: r.tenant_id, name: r.name }));
  },

  /** Only moves the next automatic check (the last one was inconclusive); the stored result stays. */
  async reschedule(
    db: Queryable,
    tenantId: string,
    id: string,
    checkedAt: Date,
    nextCheckAt: Date,
  ): Promise<void> {
    await db.query(
      'UPDATE domains SET last_checked_at = $3, next_check_at = $4 WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL',
      [tenantId, id, checkedAt, nextCheckAt],
    );
  },

  /**
   * Stores the result of a DNS check and, in the same transaction, writes a DOMAIN_VERIFICATION
   * event to the outbox: always (`emit: 'always'`, an explicit verify) or only when `verified`
   * changed (`'on-change'`, the background re-check). Null when the domain is gone.
   */
  async saveCheck(
    db: Db,
    tenantId: string,
    id: string,
    result: { verified: boolean; records: DomainDnsRecord[]; checkedAt: Date },
    schedule: (before: StoredDomain) => CheckSchedule,
    emit: 'always' | 'on-change',
  ): Promise<SavedCheck | null> {
    return db.transaction(async (tx) => {
      const { rows } = await tx.query<Row>(
        `SELECT ${COLUMNS} ${FROM} WHERE d.tenant_id = $1 AND d.id = $2 AND d.deleted_at IS NULL FOR UPDATE OF d`,
        [tenantId, id],
      );
      if (!rows[0]) return null;
      const before = toDomain(rows[0]);
      const next = schedule(before);
      const changed = before.verified !== result.verified;
      const updated = await tx.query<Row>(
        `UPDATE domains d SET verified = $3, records = $4::jsonb, last_checked_at = $5, next_check_at = $6,
                unverified_since = $7, updated_at = now(),
                verified_at = CASE WHEN $3 AND NOT d.verified THEN $5 ELSE d.verified_at END
          FROM mailers m WHERE m.id = d.id AND d.tenant_id = $1 AND d.id = $2
          RETURNING ${COLUMNS}`,
        [
          tenantId,
          id,
          result.verified,
          JSON.stringify(result.records),
          result.checkedAt,
          next.nextCheckAt,
          next.unverifiedSince,
        ],
      );
      const domain = toDomain(updated.rows[0]!);
      const emitted = emit === 'always' || changed;
      if (emitted) {
        await writeOutbox(tx, BusMessages.domainVerification, domainVerificationEvent(domain), { tenantId });
      }
      return { domain, changed, emitted };
    });
  },
};
