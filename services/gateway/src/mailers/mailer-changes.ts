/**
 * What the mailer API changes, apart from HTTP: create (optionally logging in first), update
 * (name/email always; the connection of password mailers, checked again where the type's
 * capabilities say so), manual enable/disable. Every change to where a password is sent passes
 * the SSRF host check first (host-guard.ts, docs/architecture.md, security 3) and needs the password again
 * (docs/architecture.md, security 7). What a type allows is read from libs/contracts mailers/capabilities.ts.
 */
import {
  type ConfigType,
  IdPrefix,
  MailerErrorText,
  type MailerProtocol,
  type SmtpSecureMode,
  credentialNeededAgain,
  defaultSmtpPort,
  mailerCapabilities,
  mailerDestination,
  newId,
} from '@mailyard/contracts';
import { type Db, HttpError, type Sealer, badRequest, conflict, notFound } from '@mailyard/platform';
import {
  type MailerConnection,
  type MailerPatch,
  type StoredMailer,
  mailers,
  reactivateMailer,
  resumeSending,
} from '@mailyard/store';
import type { MailerLogin } from './mailer-login';

export interface MailerChangeDeps {
  db: Db;
  sealer: Sealer;
  login: MailerLogin;
  /** Throws the 422 when a mailer may not connect to `host` (host-guard.ts). */
  assertHost: (host: string) => Promise<void>;
  /** REPUTATION_WINDOW: how many of a resumed mailer's copies its resume clears. */
  reputationWindow: number;
}

export async function loadMailer(db: Db, tenantId: string, id: string): Promise<StoredMailer> {
  const mailer = await mailers.get(db, tenantId, id);
  if (!mailer) throw notFound(MailerErrorText.mailerNotFound);
  return mailer;
}

export interface NewPasswordMailer {
  protocol: MailerProtocol;
  /** Log in before saving: the basic_* type; else the plain type, saved as given. */
  verify: boolean;
  name: string;
  email: string;
  conn: MailerConnection;
  password: string;
  webhook?: MailerPatch['webhook'];
}

const CREATED: Record<MailerProtocol, { configType: [ConfigType, ConfigType]; prefix: [string, string] }> = {
  smtp: { configType: ['smtp', 'basic_smtp'], prefix: [IdPrefix.smtp, IdPrefix.basicSmtp] },
  imap: { configType: ['imap', 'basic_imap'], prefix: [IdPrefix.basicImap, IdPrefix.basicImap] },
};

/** Creates a password (SMTP or IMAP) mailer; returns its id. */
export async function createPasswordMailer(
  deps: MailerChangeDeps,
  tenantId: string,
  input: NewPasswordMailer,
): Promise<string> {
  await deps.assertHost(input.conn.host);
  if (input.verify) await deps.login(input.protocol, input.conn, input.password);
  const which = input.verify ? 1 : 0;
  const { configType, prefix } = CREATED[input.protocol];
  return mailers.create(deps.db, tenantId, {
    id: newId(prefix[which] as (typeof IdPrefix)[keyof typeof IdPrefix]),
    configType: configType[which]!,
    connectionType: 'basic',
    name: input.name,
    email: input.email,
    config: input.conn,
    sealedSecret: deps.sealer.seal(input.password),
    ...(input.webhook !== undefined ? { webhook: input.webhook } : {}),
  });
}

export interface MailerUpdate {
  mailer_id: string;
  name?: string;
  email?: string;
  config?: Partial<MailerConnection> & { password?: string };
  webhook?: MailerPatch['webhook'];
}

/** Applies an update through `protocol`'s path; 404 unknown, 422 wrong path or type, 400 password missing. */
export async function updateMailer(
  deps: MailerChangeDeps,
  tenantId: string,
  protocol: MailerProtocol,
  input: MailerUpdate,
): Promise<string> {
  const mailer = await loadMailer(deps.db, tenantId, input.mailer_id);
  const caps = mailerCapabilities(mailer.configType);
  if (caps.credential === 'dkim') throw new HttpError(422, MailerErrorText.domainMailer);
  if (!caps.updatable || caps.protocol !== protocol) {
    throw new HttpError(
      422,
      protocol === 'smtp' ? MailerErrorText.notSmtpMailer : MailerErrorText.notImapMailer,
    );
  }
  const patch: MailerPatch = { name: input.name, email: input.email, webhook: input.webhook };
  const given = Object.fromEntries(Object.entries(input.config ?? {}).filter(([, v]) => v !== undefined));
  if (Object.keys(given).length > 0) {
    if (caps.credential === 'oauth') throw new HttpError(422, MailerErrorText.oauthConfig);
    const { password, ...settings } = given as Partial<MailerConnection> & { password?: string };
    const conn = { ...mailer.config, ...settings } as MailerConnection;
    if (settings.secure && settings.port === undefined && protocol === 'smtp')
      conn.port = mailer.config.port ?? defaultSmtpPort(conn.secure as SmtpSecureMode);
    // Where the password goes: a change of it needs the password again (docs/architecture.md, security 7).
    const again = credentialNeededAgain({
      before: mailerDestination(mailer.config as Partial<MailerConnection>),
      after: mailerDestination(conn),
      stored: true,
      given: password !== undefined,
    });
    if (again) throw badRequest(MailerErrorText.passwordForChange);
    await deps.assertHost(conn.host);
    if (caps.verifiedBy === 'login' || mailer.state === 'deactivated') {
      const current =
        password ?? (await mailers.password(deps.db, deps.sealer, mailer.tenantId, mailer.id)) ?? '';
      await deps.login(protocol, conn, current);
      patch.reauthenticated = true;
    }
    patch.config = conn;
    if (password !== undefined) patch.sealedSecret = deps.sealer.seal(password);
  }
  if (!(await mailers.update(deps.db, mailer.tenantId, mailer.id, patch)))
    throw notFound(MailerErrorText.mailerNotFound);
  return mailer.id;
}

/** Manual disable: active -> disabled, no event; returns whether it was already disabled. */
export async function disableMailer(db: Db, tenantId: string, id: string): Promise<{ already: boolean }> {
  const before = await mailers.setStateManually(db, tenantId, id, ['active'], 'disabled');
  if (before === null) throw notFound(MailerErrorText.mailerNotFound);
  if (before === 'deactivated') throw conflict(MailerErrorText.deactivatedDisable);
  return { already: before === 'disabled' };
}

/**
 * Manual enable: disabled -> active. A deactivated password mailer logs in with its stored
 * credentials first (only a successful re-authentication re-activates it; docs/api/mailers.md); an OAuth one
 * must be re-authorised. Returns whether it was already active.
 */
export async function enableMailer(
  deps: MailerChangeDeps,
  tenantId: string,
  id: string,
): Promise<{ already: boolean; resumed: boolean }> {
  const mailer = await loadMailer(deps.db, tenantId, id);
  // A sending pause (docs/deliverability.md "Reputation and automatic pause") is not a mailer
  // state: enable resumes it too, once the mailer is active (an active mailer: only that).
  const resume = () => resumeSending(deps.db, tenantId, 'mailer', id, deps.reputationWindow);
  if (mailer.state === 'active') {
    const resumed = await resume();
    return { already: !resumed, resumed };
  }
  const { passwordProtocol, credential } = mailerCapabilities(mailer.configType);
  // The host may resolve elsewhere since it was saved: checked again before it is used again.
  if (passwordProtocol) await deps.assertHost((mailer.config as MailerConnection).host);
  // A SparkPost mailer's own API base is checked the same way.
  if (mailer.config.base_url) await deps.assertHost(new URL(mailer.config.base_url).hostname);
  if (mailer.state === 'disabled') {
    const before = await mailers.setStateManually(deps.db, tenantId, id, ['disabled'], 'active');
    if (before === null) throw notFound(MailerErrorText.mailerNotFound);
    if (before === 'deactivated') throw conflict(MailerErrorText.deactivatedDisable);
  } else {
    if (credential === 'oauth') throw new HttpError(422, MailerErrorText.oauthReauth);
    // There is no login to try an API key with: a new key (PUT /v1/mailer/sparkpost) re-activates it.
    if (credential === 'api_key') throw new HttpError(422, MailerErrorText.apiKeyReauth);
    if (passwordProtocol) {
      const password = (await mailers.password(deps.db, deps.sealer, tenantId, id)) ?? '';
      await deps.login(passwordProtocol, mailer.config as MailerConnection, password);
    }
    if ((await reactivateMailer(deps.db, tenantId, id)) === 'not_found')
      throw notFound(MailerErrorText.mailerNotFound);
  }
  return { already: false, resumed: await resume() };
}
