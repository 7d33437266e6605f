/**
 * The candidate mailers of an SMTP-submitted message (docs/submission.md "Which mailer sends"),
 * read in one query: the tenant's undeleted mailer whose address is the envelope sender (an
 * active one first), and the tenant's domain mailer of a verified sending domain that is the
 * sender's domain or its closest parent. The choice between them is the submission service's
 * (choose-mailer.ts); whether the chosen one may send now is the shared acceptance's.
 */
import type { Queryable } from '@mailyard/platform';

export interface SubmissionMailerCandidates {
  /** A mailer whose `email` is the sender (case-insensitive); null when none. */
  byAddress: string | null;
  /** The domain mailer of the sender's verified domain (or closest parent); null when none. */
  byDomain: string | null;
}

export async function submissionMailerCandidates(
  db: Queryable,
  tenantId: string,
  sender: string,
): Promise<SubmissionMailerCandidates> {
  const at = sender.lastIndexOf('@');
  const labels = (at < 0 ? '' : sender.slice(at + 1)).toLowerCase().replace(/\.$/, '').split('.');
  const domains = labels.slice(0, -1).map((_, i) => labels.slice(i).join('.'));
  const { rows } = await db.query<{ by: 'address' | 'domain'; id: string }>(
    `(SELECT 'address' AS by, m.id FROM mailers m
       WHERE m.tenant_id = $1 AND m.deleted_at IS NULL AND m.config_type <> 'domain'
         AND lower(m.email) = lower($2)
       ORDER BY (m.state = 'active') DESC, m.id LIMIT 1)
     UNION ALL
     (SELECT 'domain' AS by, m.id FROM mailers m JOIN domains d ON d.id = m.id
       WHERE m.tenant_id = $1 AND m.deleted_at IS NULL AND d.tenant_id = $1
         AND d.deleted_at IS NULL AND d.verified AND d.name = ANY($3::text[])
       ORDER BY length(d.name) DESC LIMIT 1)`,
    [tenantId, sender, domains],
  );
  return {
    byAddress: rows.find((r) => r.by === 'address')?.id ?? null,
    byDomain: rows.find((r) => r.by === 'domain')?.id ?? null,
  };
}
