import {
  type ConfigType,
  CreateImapMailerSchema,
  CreateSmtpMailerSchema,
  type GetMailerResponse,
  IdPrefix,
  type ListMailersResponse,
  type MailerCreatedResponse,
  MailerErrorText,
  PageQuerySchema,
  UpdateImapMailerSchema,
  UpdateSmtpMailerSchema,
  defaultSmtpPort,
  newId,
} from '@mailyard/contracts';
import {
  HttpError,
  type ServiceContext,
  badRequest,
  conflict,
  notFound,
  parseOrThrow,
} from '@mailyard/platform';
import {
  type MailerConnection,
  type MailerPatch,
  type StoredMailer,
  mailers,
  reactivateMailer,
} from '@mailyard/store';
import { type Request, type Response, Router } from 'express';
import { tenantOf } from '../auth/api-key-auth';
import { readPage } from '../paging/read-page';
import { type CheckFailureKind, type CheckResult, checkFailure } from './credential-check';
import { assertMailerHost, mailerGuard } from './host-guard';
import { verifyImap } from './imap-verify';
import { sealWebhook } from './incoming-webhook';
import { toMailerView } from './mailer-view';
import { verifySmtp } from './smtp-verify';

type Protocol = 'smtp' | 'imap';

const FAILURE_TEXT: Record<Protocol, Record<CheckFailureKind, string>> = {
  smtp: {
    auth: MailerErrorText.smtpAuthFailed,
    connect: MailerErrorText.smtpConnectFailed,
    timeout: MailerErrorText.smtpTimeout,
    tls: MailerErrorText.smtpTlsFailed,
    other: MailerErrorText.smtpFailed,
    host: MailerErrorText.hostNotAllowed,
    unresolved: MailerErrorText.hostUnresolved,
  },
  imap: {
    auth: MailerErrorText.imapAuthFailed,
    connect: MailerErrorText.imapConnectFailed,
    timeout: MailerErrorText.imapTimeout,
    tls: MailerErrorText.imapTlsFailed,
    other: MailerErrorText.imapFailed,
    host: MailerErrorText.hostNotAllowed,
    unresolved: MailerErrorText.hostUnresolved,
  },
};

/** Config types each update path accepts; basic ones can change `config`. */
const UPDATABLE: Record<Protocol, readonly ConfigType[]> = {
  smtp: ['smtp', 'basic_smtp', 'oauth_smtp'],
  imap: ['imap', 'basic_imap', 'oauth_imap', 'smtp_imap'],
};
/** Config types whose credentials were verified at creation: a config change is verified again. */
const VERIFIED_TYPES: readonly ConfigType[] = ['basic_smtp', 'basic_imap'];
/** Where the password is sent: changing any of these requires the password again (DESIGN.md Security 7). */
const DESTINATION_FIELDS = ['host', 'port', 'username', 'secure'] as const;

function protocolOf(configType: ConfigType): Protocol | null {
  if (configType === 'smtp' || configType === 'basic_smtp') return 'smtp';
  if (configType === 'imap' || configType === 'basic_imap') return 'imap';
  return null;
}

function idParam(req: Request): string {
  const id = req.params.mailer_id;
  if (typeof id !== 'string' || !id) throw badRequest(MailerErrorText.mailerIdRequired);
  return id;
}

/**
 * Mailer configurations (DESIGN.md paths): SMTP and IMAP create/update, the basic verify
 * endpoints (connect and authenticate before saving), get/list/delete, manual disable/enable.
 */
export function mailerRoutes(ctx: Pick<ServiceContext, 'db' | 'config' | 'sealer'>): Router {
  const { db, config, sealer } = ctx;
  const router = Router();

  const guard = mailerGuard(config);
  const check = (protocol: Protocol, conn: MailerConnection, password: string): Promise<CheckResult> =>
    protocol === 'smtp'
      ? verifySmtp({ ...conn, password }, config.SMTP_VERIFY_TIMEOUT_MS, guard)
      : verifyImap({ ...conn, password }, config.IMAP_VERIFY_TIMEOUT_MS, guard);

  const checkOrThrow = async (
    protocol: Protocol,
    conn: MailerConnection,
    password: string,
  ): Promise<void> => {
    const result = await check(protocol, conn, password);
    if (!result.ok) throw checkFailure(result, FAILURE_TEXT[protocol]);
  };

  // Tenants must not reach internal hosts through a mailer (SSRF), unless the operator allows it.
  const assertHostAllowed = (host: string): Promise<void> => assertMailerHost(host, config);

  const loadMailer = async (res: Response, id: string): Promise<StoredMailer> => {
    const mailer = await mailers.get(db, tenantOf(res).tenantId, id);
    if (!mailer) throw notFound(MailerErrorText.mailerNotFound);
    return mailer;
  };

  const createSmtp = (verify: boolean) => async (req: Request, res: Response) => {
    const input = parseOrThrow(CreateSmtpMailerSchema, req.body);
    const { secure } = input.config;
    const conn: MailerConnection = {
      host: input.config.host,
      port: input.config.port ?? defaultSmtpPort(secure),
      username: input.config.username,
      secure,
    };
    await assertHostAllowed(conn.host);
    if (verify) await checkOrThrow('smtp', conn, input.config.password);
    const id = await mailers.create(db, tenantOf(res).tenantId, {
      id: newId(verify ? IdPrefix.basicSmtp : IdPrefix.smtp),
      configType: verify ? 'basic_smtp' : 'smtp',
      connectionType: 'basic',
      name: input.name,
      email: input.email,
      config: conn,
      sealedSecret: sealer.seal(input.config.password),
    });
    const message = verify ? 'SMTP credentials verified; mailer created' : 'SMTP mailer created';
    res.status(201).json({ success: true, mailer_id: id, message } satisfies MailerCreatedResponse);
  };

  const createImap = (verify: boolean) => async (req: Request, res: Response) => {
    const input = parseOrThrow(CreateImapMailerSchema, req.body);
    const webhook = input.webhook ? sealWebhook(input.webhook, sealer, config.WEBHOOK_ALLOW_INSECURE) : null;
    const conn: MailerConnection = {
      host: input.config.host,
      port: input.config.port,
      username: input.config.username,
      secure: 'SSL',
    };
    await assertHostAllowed(conn.host);
    if (verify) await checkOrThrow('imap', conn, input.config.password);
    const id = await mailers.create(db, tenantOf(res).tenantId, {
      id: newId(IdPrefix.basicImap),
      configType: verify ? 'basic_imap' : 'imap',
      connectionType: 'basic',
      name: input.name,
      email: input.email,
      config: conn,
      sealedSecret: sealer.seal(input.config.password),
      webhook,
    });
    const message = verify ? 'IMAP credentials verified; mailer created' : 'IMAP mailer created';
    res.status(201).json({ success: true, mailer_id: id, message } satisfies MailerCreatedResponse);
  };

  /** Shared update: name/email always; config of basic mailers (verified again where needed); webhook for IMAP. */
  const update = async (
    res: Response,
    protocol: Protocol,
    input: {
      mailer_id: string;
      name?: string;
      email?: string;
      config?: Partial<MailerConnection> & { password?: string };
    },
    webhook?: MailerPatch['webhook'],
  ) => {
    const mailer = await loadMailer(res, input.mailer_id);
    if (mailer.connectionType === 'domain') throw new HttpError(422, MailerErrorText.domainMailer);
    if (!UPDATABLE[protocol].includes(mailer.configType)) {
      throw new HttpError(
        422,
        protocol === 'smtp' ? MailerErrorText.notSmtpMailer : MailerErrorText.notImapMailer,
      );
    }
    const patch: MailerPatch = { name: input.name, email: input.email, webhook };
    const given = Object.fromEntries(Object.entries(input.config ?? {}).filter(([, v]) => v !== undefined));
    if (Object.keys(given).length > 0) {
      if (mailer.connectionType === 'oauth') throw new HttpError(422, MailerErrorText.oauthConfig);
      const { password, ...settings } = given as Partial<MailerConnection> & { password?: string };
      const conn = { ...mailer.config, ...settings } as MailerConnection;
      if (settings.secure && settings.port === undefined && protocol === 'smtp')
        conn.port = mailer.config.port ?? defaultSmtpPort(conn.secure);
      const stored = mailer.config as Partial<MailerConnection>;
      const moved = DESTINATION_FIELDS.some((field) => conn[field] !== stored[field]);
      if (moved && password === undefined) throw badRequest(MailerErrorText.passwordForChange);
      await assertHostAllowed(conn.host);
      if (VERIFIED_TYPES.includes(mailer.configType) || mailer.state === 'deactivated') {
        const current = password ?? (await mailers.password(db, sealer, mailer.tenantId, mailer.id)) ?? '';
        await checkOrThrow(protocol, conn, current);
        patch.reauthenticated = true;
      }
      patch.config = conn;
      if (password !== undefined) patch.sealedSecret = sealer.seal(password);
    }
    if (!(await mailers.update(db, mailer.tenantId, mailer.id, patch)))
      throw notFound(MailerErrorText.mailerNotFound);
    res.json({ success: true, mailer_id: mailer.id, message: 'Mailer updated' });
  };

  router.post('/v1/mailer/smtp', createSmtp(false));
  router.post('/v1/smtpbasic/verify', createSmtp(true));
  router.post('/v1/mailer/imap', createImap(false));
  router.post('/v1/imapbasic/verify', createImap(true));

  router.put('/v1/mailer/smtp', async (req, res) => {
    await update(res, 'smtp', parseOrThrow(UpdateSmtpMailerSchema, req.body));
  });

  router.put('/v1/mailer/imap', async (req, res) => {
    const input = parseOrThrow(UpdateImapMailerSchema, req.body);
    const webhook =
      input.webhook === undefined
        ? undefined
        : input.webhook === null
          ? null
          : sealWebhook(input.webhook, sealer, config.WEBHOOK_ALLOW_INSECURE);
    await update(res, 'imap', input, webhook);
  });

  router.get('/v1/mailers', async (req, res) => {
    const query = parseOrThrow(PageQuerySchema, req.query);
    const page = await readPage(() => mailers.list(db, tenantOf(res).tenantId, query));
    res.json({
      success: true,
      data: page.items.map(toMailerView),
      nextPageToken: page.nextCursor,
      totalCount: page.totalCount,
    } satisfies ListMailersResponse);
  });

  router.get('/v1/mailer/:mailer_id', async (req, res) => {
    const mailer = await loadMailer(res, idParam(req));
    res.json({ success: true, data: toMailerView(mailer) } satisfies GetMailerResponse);
  });

  router.delete('/v1/mailer/:mailer_id', async (req, res) => {
    if (!(await mailers.delete(db, tenantOf(res).tenantId, idParam(req))))
      throw notFound(MailerErrorText.mailerNotFound);
    res.json({ success: true, message: 'Mailer deleted' });
  });

  /** Manual disable: active -> disabled, no event. A deactivated mailer must be re-authenticated first. */
  router.post('/v1/mailer/:mailer_id/disable', async (req, res) => {
    const id = idParam(req);
    const before = await mailers.setStateManually(db, tenantOf(res).tenantId, id, ['active'], 'disabled');
    if (before === null) throw notFound(MailerErrorText.mailerNotFound);
    if (before === 'deactivated') throw conflict(MailerErrorText.deactivatedDisable);
    const message = before === 'disabled' ? 'Mailer was already disabled' : 'Mailer disabled';
    res.json({ success: true, mailer_id: id, state: 'disabled', message });
  });

  /**
   * Manual enable: disabled -> active. A deactivated basic mailer is re-authenticated with its
   * stored credentials first (SPEC.md: only a successful re-authentication re-activates it).
   */
  router.post('/v1/mailer/:mailer_id/enable', async (req, res) => {
    const mailer = await loadMailer(res, idParam(req));
    const { tenantId, id } = mailer;
    if (mailer.state === 'active') {
      res.json({ success: true, mailer_id: id, state: 'active', message: 'Mailer was already active' });
      return;
    }
    const protocol = protocolOf(mailer.configType);
    // The host may resolve elsewhere since it was saved: checked again before it is used again.
    if (protocol) await assertHostAllowed((mailer.config as MailerConnection).host);
    if (mailer.state === 'disabled') {
      const before = await mailers.setStateManually(db, tenantId, id, ['disabled'], 'active');
      if (before === null) throw notFound(MailerErrorText.mailerNotFound);
      if (before === 'deactivated') throw conflict(MailerErrorText.deactivatedDisable);
    } else {
      if (mailer.connectionType === 'oauth') throw new HttpError(422, MailerErrorText.oauthReauth);
      if (protocol) {
        const password = (await mailers.password(db, sealer, tenantId, id)) ?? '';
        await checkOrThrow(protocol, mailer.config as MailerConnection, password);
      }
      if ((await reactivateMailer(db, tenantId, id)) === 'not_found')
        throw notFound(MailerErrorText.mailerNotFound);
    }
    res.json({ success: true, mailer_id: id, state: 'active', message: 'Mailer enabled' });
  });

  // Path parameter missing: a 400 naming it rather than the bare 404 of an unknown route.
  router.all('/v1/mailer', (req, _res, next) => {
    if (req.method === 'GET' || req.method === 'DELETE') throw badRequest(MailerErrorText.mailerIdRequired);
    next();
  });

  return router;
}
