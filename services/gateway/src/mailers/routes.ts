/**
 * Mailer configurations over HTTP (docs/api/mailers.md): SMTP, IMAP and SparkPost create/update, the basic
 * verify endpoints (connect and authenticate before saving), get/list/delete, manual
 * disable/enable. Routes parse, call mailer-changes.ts and shape the response; host checks
 * (host-guard.ts), logins (mailer-login.ts) and state changes live in those modules.
 */
import {
  CreateImapMailerSchema,
  CreateSmtpMailerSchema,
  CreateSparkPostMailerSchema,
  type GetMailerResponse,
  type ListMailersResponse,
  type MailerCreatedResponse,
  MailerErrorText,
  PageQuerySchema,
  type SparkPostMailerCreatedResponse,
  UpdateImapMailerSchema,
  UpdateSmtpMailerSchema,
  UpdateSparkPostMailerSchema,
  defaultSmtpPort,
} from '@mailyard/contracts';
import {
  badRequest,
  notFound,
  parseOrThrow,
  reputationSettingsOf,
  trackingBaseUrl,
} from '@mailyard/platform';
import { mailers } from '@mailyard/store';
import { type Request, type Response, Router } from 'express';
import { tenantOf } from '../auth/api-key-auth';
import { readPage } from '../paging/read-page';
import type { GatewayContext } from '../settings';
import { assertMailerHost } from './host-guard';
import { sealWebhook, webhookForUpdate } from './incoming-webhook';
import {
  type MailerChangeDeps,
  createPasswordMailer,
  disableMailer,
  enableMailer,
  loadMailer,
  updateMailer,
} from './mailer-changes';
import { mailerLogin } from './mailer-login';
import { toMailerView } from './mailer-view';
import { createSparkPostMailer, sparkPostCallback, updateSparkPostMailer } from './sparkpost-mailer';

function idParam(req: Request): string {
  const id = req.params.mailer_id;
  if (typeof id !== 'string' || !id) throw badRequest(MailerErrorText.mailerIdRequired);
  return id;
}

export function mailerRoutes(ctx: Pick<GatewayContext, 'db' | 'config' | 'sealer'>): Router {
  const { db, config, sealer } = ctx;
  const router = Router();
  const deps: MailerChangeDeps = {
    db,
    sealer,
    login: mailerLogin({
      ...config,
      smtpTimeoutMs: config.SMTP_VERIFY_TIMEOUT_MS,
      imapTimeoutMs: config.IMAP_VERIFY_TIMEOUT_MS,
    }),
    // Tenants must not reach internal hosts through a mailer (SSRF), unless the operator allows it.
    assertHost: (host) => assertMailerHost(host, config),
    reputationWindow: reputationSettingsOf(config).window,
  };
  const insecureWebhooks = config.WEBHOOK_ALLOW_INSECURE;
  const tracking = trackingBaseUrl(config);
  const view = (m: Parameters<typeof toMailerView>[0]) => toMailerView(m, tracking);

  const createSmtp = (verify: boolean) => async (req: Request, res: Response) => {
    const input = parseOrThrow(CreateSmtpMailerSchema, req.body);
    const { secure } = input.config;
    const id = await createPasswordMailer(deps, tenantOf(res).tenantId, {
      protocol: 'smtp',
      verify,
      name: input.name,
      email: input.email,
      conn: {
        host: input.config.host,
        port: input.config.port ?? defaultSmtpPort(secure),
        username: input.config.username,
        secure,
      },
      password: input.config.password,
    });
    const message = verify ? 'SMTP credentials verified; mailer created' : 'SMTP mailer created';
    res.status(201).json({ success: true, mailer_id: id, message } satisfies MailerCreatedResponse);
  };

  const createImap = (verify: boolean) => async (req: Request, res: Response) => {
    const input = parseOrThrow(CreateImapMailerSchema, req.body);
    const webhook = input.webhook ? sealWebhook(input.webhook, sealer, insecureWebhooks) : null;
    const id = await createPasswordMailer(deps, tenantOf(res).tenantId, {
      protocol: 'imap',
      verify,
      name: input.name,
      email: input.email,
      conn: {
        host: input.config.host,
        port: input.config.port,
        username: input.config.username,
        secure: 'SSL',
      },
      password: input.config.password,
      webhook,
    });
    const message = verify ? 'IMAP credentials verified; mailer created' : 'IMAP mailer created';
    res.status(201).json({ success: true, mailer_id: id, message } satisfies MailerCreatedResponse);
  };

  router.post('/v1/mailer/smtp', createSmtp(false));
  router.post('/v1/smtpbasic/verify', createSmtp(true));
  router.post('/v1/mailer/imap', createImap(false));
  router.post('/v1/imapbasic/verify', createImap(true));

  router.post('/v1/mailer/sparkpost', async (req, res) => {
    const input = parseOrThrow(CreateSparkPostMailerSchema, req.body);
    const created = await createSparkPostMailer(deps, tenantOf(res).tenantId, input);
    res.status(201).json({
      success: true,
      mailer_id: created.id,
      message:
        'SparkPost mailer created; set up its webhook in SparkPost with the callback URL and credentials (the password is shown only now)',
      callback: { ...sparkPostCallback(tracking, created.id, created.username), password: created.password },
    } satisfies SparkPostMailerCreatedResponse);
  });

  router.put('/v1/mailer/sparkpost', async (req, res) => {
    const input = parseOrThrow(UpdateSparkPostMailerSchema, req.body);
    const id = await updateSparkPostMailer(deps, tenantOf(res).tenantId, input);
    res.json({ success: true, mailer_id: id, message: 'Mailer updated' });
  });

  router.put('/v1/mailer/smtp', async (req, res) => {
    const input = parseOrThrow(UpdateSmtpMailerSchema, req.body);
    const id = await updateMailer(deps, tenantOf(res).tenantId, 'smtp', input);
    res.json({ success: true, mailer_id: id, message: 'Mailer updated' });
  });

  router.put('/v1/mailer/imap', async (req, res) => {
    const { webhook, ...input } = parseOrThrow(UpdateImapMailerSchema, req.body);
    const { tenantId } = tenantOf(res);
    const sealed = await webhookForUpdate(
      { db, sealer, allowInsecure: insecureWebhooks },
      tenantId,
      input.mailer_id,
      webhook,
    );
    const id = await updateMailer(deps, tenantId, 'imap', { ...input, webhook: sealed });
    res.json({ success: true, mailer_id: id, message: 'Mailer updated' });
  });

  router.get('/v1/mailers', async (req, res) => {
    const query = parseOrThrow(PageQuerySchema, req.query);
    const page = await readPage(() => mailers.list(db, tenantOf(res).tenantId, query));
    res.json({
      success: true,
      data: page.items.map(view),
      nextPageToken: page.nextCursor,
      totalCount: page.totalCount,
    } satisfies ListMailersResponse);
  });

  router.get('/v1/mailer/:mailer_id', async (req, res) => {
    const mailer = await loadMailer(db, tenantOf(res).tenantId, idParam(req));
    res.json({ success: true, data: view(mailer) } satisfies GetMailerResponse);
  });

  router.delete('/v1/mailer/:mailer_id', async (req, res) => {
    if (!(await mailers.delete(db, tenantOf(res).tenantId, idParam(req))))
      throw notFound(MailerErrorText.mailerNotFound);
    res.json({ success: true, message: 'Mailer deleted' });
  });

  /** Manual disable: active -> disabled, no event. A deactivated mailer must be re-authenticated first. */
  router.post('/v1/mailer/:mailer_id/disable', async (req, res) => {
    const id = idParam(req);
    const { already } = await disableMailer(db, tenantOf(res).tenantId, id);
    const message = already ? 'Mailer was already disabled' : 'Mailer disabled';
    res.json({ success: true, mailer_id: id, state: 'disabled', message });
  });

  /** Manual enable: disabled -> active; a deactivated mailer is re-authenticated first (mailer-changes.ts). */
  router.post('/v1/mailer/:mailer_id/enable', async (req, res) => {
    const id = idParam(req);
    const { already, resumed } = await enableMailer(deps, tenantOf(res).tenantId, id);
    const message = already
      ? 'Mailer was already active'
      : resumed
        ? 'Mailer enabled; sending resumed'
        : 'Mailer enabled';
    res.json({ success: true, mailer_id: id, state: 'active', message });
  });

  // Path parameter missing: a 400 naming it rather than the bare 404 of an unknown route.
  router.all('/v1/mailer', (req, _res, next) => {
    if (req.method === 'GET' || req.method === 'DELETE') throw badRequest(MailerErrorText.mailerIdRequired);
    next();
  });

  return router;
}
