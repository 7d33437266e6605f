import { type Content, IdPrefix, type Template, newId } from '@mailyard/contracts';
import type { Queryable } from '@mailyard/platform';
import { type Page, type PageRequest, pageAfter, toPage } from './cursor';

type TemplateRow = {
  id: string;
  name: string;
  subject: string;
  content: Content[];
  created_at: Date;
  updated_at: Date;
};

const toTemplate = (r: TemplateRow): Template => ({
  id: r.id,
  name: r.name,
  subject: r.subject,
  content: r.content,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

/** Templates, always scoped to one tenant: another tenant's id behaves as absent. */
export const templates = {
  async create(
    db: Queryable,
    tenantId: string,
    input: { name: string; subject: string; content: Content[] },
  ): Promise<string> {
    const id = newId(IdPrefix.template);
    await db.query(
      'INSERT INTO templates (id, tenant_id, name, subject, content) VALUES ($1, $2, $3, $4, $5)',
      [id, tenantId, input.name, input.subject, JSON.stringify(input.content)],
    );
    return id;
  },

  async get(db: Queryable, tenantId: string, id: string): Promise<Template | null> {
    const { rows } = await db.query<TemplateRow>(
      'SELECT id, name, subject, content, created_at, updated_at FROM templates WHERE tenant_id = $1 AND id = $2',
      [tenantId, id],
    );
    return rows[0] ? toTemplate(rows[0]) : null;
  },

  /**
   * Name, subject and content of several templates in one statement (the gateway's read batches
   * concurrent GETs): only each (tenant, id) pair asked for, so another tenant's id reads as
   * absent; the rows come back in no particular order, with their tenant and id.
   */
  async readMany(
    db: Queryable,
    keys: ReadonlyArray<{ tenantId: string; id: string }>,
  ): Promise<Array<{ tenant_id: string; id: string; name: string; subject: string; content: Content[] }>> {
    const { rows } = await db.query<{
      tenant_id: string;
      id: string;
      name: string;
      subject: string;
      content: Content[];
    }>(
      `SELECT t.tenant_id, t.id, t.name, t.subject, t.content
         FROM templates t JOIN unnest($1::text[], $2::text[]) AS k(tenant_id, id)
           ON t.tenant_id = k.tenant_id AND t.id = k.id`,
      [keys.map((k) => k.tenantId), keys.map((k) => k.id)],
    );
    return rows;
  },

  async list(
    db: Queryable,
    tenantId: string,
    page: PageRequest,
  ): Promise<Page<{ id: string; name: string }>> {
    const after = pageAfter(page.pageToken) ?? '';
    const { rows } = await db.query<{ id: string; name: string }>(
      'SELECT id, name FROM templates WHERE tenant_id = $1 AND id > $2 ORDER BY id LIMIT $3',
      [tenantId, after, page.pageSize + 1],
    );
    return toPage(rows, page.pageSize, (r) => r.id);
  },

  /** Applies only the given fields; false when no such template for this tenant. */
  async update(
    db: Queryable,
    tenantId: string,
    id: string,
    patch: { name?: string; subject?: string; content?: Content[] },
  ): Promise<boolean> {
    const res = await db.query(
      `UPDATE templates
          SET name = COALESCE($3, name), subject = COALESCE($4, subject),
              content = COALESCE($5::jsonb, content), updated_at = now()
        WHERE tenant_id = $1 AND id = $2`,
      [
        tenantId,
        id,
        patch.name ?? null,
        patch.subject ?? null,
        patch.content ? JSON.stringify(patch.content) : null,
      ],
    );
    return res.rowCount > 0;
  },

  async delete(db: Queryable, tenantId: string, id: string): Promise<boolean> {
    const res = await db.query('DELETE FROM templates WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
    return res.rowCount > 0;
  },
};
