/**
 * A message's timeline: the events recorded for one send (`ref_id`) of one tenant, oldest first,
 * as the spec's event objects (`email_events.payload`, the object webhooks receive). Read by
 * GET /v1/email/logs/{refId}/events (docs/api/logs.md) and the dashboard's message page.
 * `exists` tells "a send without events yet" (still QUEUED) from "no such send for this tenant"
 * (another tenant's ref_id reads as missing). At most `limit` events: a heavily opened message
 * keeps its first ones, and `truncated` says more exist.
 */
import type { EmailEvent } from '@mailyard/contracts';
import type { Queryable } from '@mailyard/platform';

export interface EmailTimeline {
  exists: boolean;
  events: EmailEvent[];
  truncated: boolean;
}

export async function emailTimeline(
  db: Queryable,
  tenantId: string,
  refId: string,
  limit: number,
): Promise<EmailTimeline> {
  const [events, logs] = await Promise.all([
    db.query<{ payload: EmailEvent }>(
      `SELECT payload FROM email_events
        WHERE tenant_id = $1 AND ref_id = $2
        ORDER BY event_at, id LIMIT $3`,
      [tenantId, refId, limit + 1],
    ),
    db.query<{ one: number }>(
      'SELECT 1 AS one FROM email_logs WHERE tenant_id = $1 AND ref_id = $2 LIMIT 1',
      [tenantId, refId],
    ),
  ]);
  const rows = events.rows.map((r) => r.payload);
  return {
    exists: logs.rows.length > 0 || rows.length > 0,
    events: rows.slice(0, limit),
    truncated: rows.length > limit,
  };
}
