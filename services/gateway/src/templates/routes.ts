import {
  type CreateTemplateResponse,
  CreateTemplateSchema,
  ErrorText,
  type GetTemplateResponse,
  type ListTemplatesResponse,
  PageQuerySchema,
  UpdateTemplateSchema,
} from '@mailyard/contracts';
import { type Db, badRequest, notFound, parseOrThrow } from '@mailyard/platform';
import { templates } from '@mailyard/store';
import { Router } from 'express';
import { tenantOf } from '../auth/api-key-auth';
import { readPage } from '../paging/read-page';
import { templateReader } from './template-reader';

/** docs/api/templates.md: create, read, list, partial update, permanent delete. */
export function templateRoutes(db: Db): Router {
  const router = Router();
  const readTemplate = templateReader(db);

  router.post('/v1/email/template', async (req, res) => {
    const input = parseOrThrow(CreateTemplateSchema, req.body);
    const id = await templates.create(db, tenantOf(res).tenantId, input);
    res.status(201).json({ success: true, template_id: id } satisfies CreateTemplateResponse);
  });

  router.get('/v1/email/template/:id', async (req, res) => {
    const t = await readTemplate(tenantOf(res).tenantId, req.params.id!);
    if (!t) throw notFound(ErrorText.templateNotFound);
    res.json({
      success: true,
      template: { name: t.name, subject: t.subject, content: t.content },
    } satisfies GetTemplateResponse);
  });

  router.get('/v1/email/templates', async (req, res) => {
    const query = parseOrThrow(PageQuerySchema, req.query);
    const page = await readPage(() => templates.list(db, tenantOf(res).tenantId, query));
    res.json({
      success: true,
      templates: page.items,
      next_page_token: page.nextCursor,
    } satisfies ListTemplatesResponse);
  });

  router.put('/v1/email/template', async (req, res) => {
    const { template_id, ...patch } = parseOrThrow(UpdateTemplateSchema, req.body);
    if (!(await templates.update(db, tenantOf(res).tenantId, template_id, patch)))
      throw notFound(ErrorText.templateNotFound);
    res.json({ success: true, template_id });
  });

  router.delete('/v1/email/template/:id', async (req, res) => {
    if (!(await templates.delete(db, tenantOf(res).tenantId, req.params.id!)))
      throw notFound(ErrorText.templateNotFound);
    res.json({ success: true });
  });

  // Path parameter given empty or missing: the spec's own message, not a bare 404.
  router.all('/v1/email/template', (req, _res, next) => {
    if (req.method === 'GET' || req.method === 'DELETE') throw badRequest(ErrorText.templateIdRequired);
    next();
  });

  return router;
}
