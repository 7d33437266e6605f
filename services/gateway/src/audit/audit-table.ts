/**
 * What the audit log records for each change route of the /v1 API (docs/api/audit.md): the
 * action, the kind of resource, and where the resource's id is (a path parameter, a field of the
 * answer, or an identifying field of the request: never the body itself). One table for every
 * route, read by the audit step (audit-step.ts) after a 2xx answer; audit-table.test.ts fails for
 * a mutating route the gateway serves with no line here (or in NOT_AUDITED), so a new route
 * cannot be forgotten.
 */
import type { AuditAction, AuditResource } from '@mailyard/contracts';

/** What the audit step knows when the route answers. */
export interface AuditSource {
  params: Record<string, unknown>;
  /** The request body as parsed (only identifying fields are read, see `field`). */
  request: unknown;
  /** The JSON answer about to be sent. */
  answer: unknown;
}

export interface AuditRule {
  action: AuditAction | ((s: AuditSource) => AuditAction);
  resource: AuditResource;
  /** The resource's id; null when the change has none (a bulk change). */
  id: (s: AuditSource) => string | null;
  /** Record nothing when the change has no id (the route answered without changing anything). */
  onlyWithId?: boolean;
}

/** Identifiers only: a short string, never an object or a long text. */
const ident = (v: unknown): string | null =>
  typeof v === 'string' && v.length > 0 && v.length <= 320 ? v : null;

const field = (obj: unknown, path: string): unknown =>
  path
    .split('.')
    .reduce<unknown>(
      (o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined),
      obj,
    );

const param = (name: string) => (s: AuditSource) => ident(s.params[name]);
/** The route's only path parameter, whatever its name (routes of other modules). */
const onlyParam = (s: AuditSource) => ident(Object.values(s.params)[0]);
const answer = (path: string) => (s: AuditSource) => ident(field(s.answer, path));
const request = (path: string) => (s: AuditSource) => ident(field(s.request, path));
const none = () => null;

const rule = (
  action: AuditRule['action'],
  resource: AuditResource,
  id: AuditRule['id'],
  extra: Partial<AuditRule> = {},
): AuditRule => ({ action, resource, id, ...extra });

/** `METHOD /route/path` (as declared) -> its rule. */
export const AUDIT_TABLE: Readonly<Record<string, AuditRule>> = {
  // API keys (keys/routes.ts)
  'POST /v1/keys': rule('create', 'api_key', answer('key_id')),
  'DELETE /v1/keys/:key_id': rule('delete', 'api_key', param('key_id')),
  // Templates
  'POST /v1/email/template': rule('create', 'template', answer('template_id')),
  'PUT /v1/email/template': rule('update', 'template', answer('template_id')),
  'DELETE /v1/email/template/:id': rule('delete', 'template', param('id')),
  // Sending domains
  'POST /v1/domain/add': rule('create', 'domain', answer('data.domain')),
  'PUT /v1/domain/verify/:domain': rule('verify', 'domain', param('domain')),
  'DELETE /v1/domain/:domain': rule('delete', 'domain', param('domain')),
  'POST /v1/domain/:domain/resume': rule('resume', 'domain', param('domain')),
  // Mailers (the verify routes check the credentials, then create the mailer)
  'POST /v1/mailer/smtp': rule('create', 'mailer', answer('mailer_id')),
  'POST /v1/smtpbasic/verify': rule('create', 'mailer', answer('mailer_id')),
  'POST /v1/mailer/imap': rule('create', 'mailer', answer('mailer_id')),
  'POST /v1/imapbasic/verify': rule('create', 'mailer', answer('mailer_id')),
  'PUT /v1/mailer/smtp': rule('update', 'mailer', answer('mailer_id')),
  'PUT /v1/mailer/imap': rule('update', 'mailer', answer('mailer_id')),
  'POST /v1/mailer/sparkpost': rule('create', 'mailer', answer('mailer_id')),
  'PUT /v1/mailer/sparkpost': rule('update', 'mailer', answer('mailer_id')),
  'DELETE /v1/mailer/:mailer_id': rule('delete', 'mailer', param('mailer_id')),
  'POST /v1/mailer/:mailer_id/disable': rule('disable', 'mailer', param('mailer_id')),
  'POST /v1/mailer/:mailer_id/enable': rule('enable', 'mailer', param('mailer_id')),
  // OAuth: a login that answers a consent URL has changed nothing yet (the callback, reached
  // without a key, connects the mailer); one that reconnected a mailer at once is recorded.
  'POST /v1/oauth/apps': rule('create', 'oauth_app', answer('app_id')),
  'DELETE /v1/oauth/apps/:app_id': rule('delete', 'oauth_app', param('app_id')),
  'POST /v1/oauth/login': rule('update', 'mailer', answer('mailer_id'), { onlyWithId: true }),
  'POST /v1/oauth/activate': rule(
    (s) => (field(s.answer, 'state') === 'active' ? 'enable' : 'disable'),
    'mailer',
    answer('mailer_id'),
  ),
  // Suppressions (unsubscribe adds the address, subscribe removes it)
  'POST /v1/email/unsubscribe': rule('create', 'suppression', request('email')),
  'POST /v1/email/subscribe': rule('delete', 'suppression', request('email')),
  'POST /v1/suppressions': rule('create', 'suppression', none),
  'DELETE /v1/suppressions/:email': rule('delete', 'suppression', onlyParam),
  // Webhooks: one per event type, so the event names the webhook on update, delete, rotate
  'POST /v1/webhook/register': rule('create', 'webhook', answer('webhook_id')),
  'PUT /v1/webhook/update': rule('update', 'webhook', request('event')),
  'DELETE /v1/webhook/delete': rule('delete', 'webhook', request('event')),
  'POST /v1/webhook/rotate-secret': rule('rotate', 'webhook', request('event')),
  'POST /v1/webhook/deliveries/:id/replay': rule('replay', 'webhook_delivery', param('id')),
  // Inbound
  'POST /v1/inbound/relay_webhook': rule('create', 'inbound_domain', request('domain')),
  'PUT /v1/inbound/update/:domain': rule('update', 'inbound_domain', param('domain')),
  'POST /v1/inbound/username': rule('create', 'inbound_address', (s) => {
    const user = ident(field(s.request, 'user_name'));
    const domain = ident(field(s.request, 'domain'));
    return user && domain ? `${user}@${domain}` : null;
  }),
  'PUT /v1/inbound/username/update/:username': rule('update', 'inbound_address', param('username')),
  // History backfill (and its legacy aliases)
  'POST /v1/imap/:mailerID/history': rule('create', 'backfill', answer('jobId')),
  'POST /v1/imap/:mailerID/history/:jobId/abort': rule('cancel', 'backfill', param('jobId')),
  'POST /v1/:mailerID/backfill': rule('create', 'backfill', answer('jobId')),
  'POST /v1/:mailerID/backfill/:jobId/abort': rule('cancel', 'backfill', param('jobId')),
  // Scheduled sends
  'POST /v1/email/send/:ref_id/cancel': rule('cancel', 'email', onlyParam),
};

/**
 * Mutating /v1 routes deliberately not audited, and why. Sends are recorded per recipient in the
 * email log (GET /v1/email/logs); an audit row per send would be a write on the busiest route.
 */
export const NOT_AUDITED: Readonly<Record<string, string>> = {
  'POST /v1/email/send': 'every send is in the email log',
};

export const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The rule of `method routePath`, undefined for routes that change nothing or are not audited. */
export const auditRuleOf = (method: string, routePath: string): AuditRule | undefined =>
  AUDIT_TABLE[`${method} ${routePath}`];
