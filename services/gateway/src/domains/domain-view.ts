import type { DomainData } from '@mailyard/contracts';
import type { StoredDomain } from '@mailyard/store';

/** The `data` object of the domain responses. */
export function toDomainData(d: StoredDomain): DomainData {
  return {
    domain: d.name,
    unicode_domain: d.unicodeName,
    mailer_id: d.id,
    verified: d.verified,
    records: d.records,
    selector: d.selector,
    state: d.state,
    custom_args: d.customArgs,
    is_tenant_domain: d.isTenantDomain,
    is_tenant_subdomain: d.isTenantSubdomain,
    shared_with_subaccounts: d.sharedWithSubaccounts,
    ips: d.ips,
    last_checked_at: d.lastCheckedAt?.toISOString() ?? null,
    verified_at: d.verifiedAt?.toISOString() ?? null,
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
  };
}
