/**
 * GET /v1/email/template/{id} reads through one batch per event-loop turn (TurnBatcher): the
 * template reads of concurrent requests, whatever their tenants, share one statement
 * (templates.readMany) and one database round trip instead of one each. Each read still asks for
 * its own (tenant, id) pair, so isolation is unchanged, and it is sent after its request arrived,
 * so it sees every write committed before (a PUT answered earlier is read back).
 */
import type { Content } from '@mailyard/contracts';
import { type Queryable, TurnBatcher } from '@mailyard/platform';
import { templates } from '@mailyard/store';

export interface TemplateBody {
  name: string;
  subject: string;
  content: Content[];
}

export function templateReader(db: Queryable) {
  const batcher = new TurnBatcher<{ tenantId: string; id: string }, TemplateBody | null>(
    async (_group, keys) => {
      const rows = await templates.readMany(db, keys);
      const byKey = new Map(rows.map((r) => [`${r.tenant_id}\n${r.id}`, r]));
      return keys.map((k) => {
        const r = byKey.get(`${k.tenantId}\n${k.id}`);
        return r ? { name: r.name, subject: r.subject, content: r.content } : null;
      });
    },
  );
  return (tenantId: string, id: string): Promise<TemplateBody | null> => batcher.add('', { tenantId, id });
}
