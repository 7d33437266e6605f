/**
 * The tenant isolation table: for every /v1 route, what tenant B tries with tenant A's ids and
 * names (support/isolation-fixture.ts) and the answer it must get: the route's not-found answer
 * for a read, update, delete or action on A's resource; for a list, or for a request that acts on
 * B's own data under a name A also uses (a domain, a webhook event, an OAuth client, a
 * suppressed address), its success answer showing nothing of A. Routes that name nothing that
 * exists (creates, the OAuth callback) are exempt, with the reason. tenant-isolation.test.ts
 * checks that every route the gateway serves has a row, that every id-like field of a route is
 * exercised, that exempt routes take no id, runs every probe as B and compares A's stored rows
 * before and after.
 */
import {
  BackfillErrorText,
  DomainErrorText,
  ErrorText,
  InboundErrorText,
  MailerErrorText,
  OAuthErrorText,
  SuppressionErrorText,
  WebhookErrorText,
} from '@mailyard/contracts';
import type { Response } from 'supertest';
import { type Fixture, type TenantA, webhookBody } from './isolation-fixture';

export interface Probe {
  what: string;
  path: (f: Fixture) => string;
  body?: (f: Fixture) => Record<string, unknown>;
  status: number;
  /** The error of a refusal (the route's own not-found message). */
  error?: string;
  /** A success answer: what it must (not) show, besides no identifier of A. */
  shows?: (body: Record<string, unknown>) => void;
  /** Removes what a successful probe created for B, so later probes meet B as before. */
  undo?: (as: AsB, res: Response, f: Fixture) => Promise<unknown>;
}

export type Row = { probes: Probe[] } | { exempt: string };

/** Requests as tenant B. */
export interface AsB {
  post(path: string, body?: object): Promise<Response>;
  delete(path: string, body?: object): Promise<Response>;
}

type Path = (f: Fixture) => string;
type Body = (f: Fixture) => Record<string, unknown>;

/** B's request on A's resource: the route's not-found answer. */
const refused = (what: string, path: Path, error: string, body?: Body): Probe => ({
  what,
  path,
  ...(body ? { body } : {}),
  status: 404,
  error,
});

const emptyList = (field: string) => (body: Record<string, unknown>) => {
  if (!Array.isArray(body[field]) || (body[field] as unknown[]).length !== 0)
    throw new Error(`expected an empty ${field}, got ${JSON.stringify(body[field])}`);
};

/** B's list or filter: 200, and `field` empty (B owns nothing of that kind). */
const empty = (what: string, path: Path, field: string): Probe => ({
  what,
  path,
  status: 200,
  shows: emptyList(field),
});

/** B's stats: 200, every total zero (its buckets are there, empty). */
const zeroStats = (what: string, path: Path): Probe => ({
  what,
  path,
  status: 200,
  shows: (body) => {
    const totals = body.totals as Record<string, number>;
    if (!totals || Object.values(totals).some((n) => n !== 0))
      throw new Error(`expected zero totals, got ${JSON.stringify(totals)}`);
  },
});

/** B's list of a kind it owns too: 200 (the test checks that no id of A is in it). */
const listed = (what: string, path: string): Probe => ({ what, path: () => path, status: 200 });

const row = (...probes: Probe[]): Row => ({ probes });

const MAILERS: Array<[string, (a: TenantA) => string]> = [
  ['SMTP mailer', (a) => a.smtpMailer],
  ['IMAP mailer', (a) => a.imapMailer],
  ['SparkPost mailer', (a) => a.sparkPostMailer],
  ['OAuth mailer', (a) => a.oauthMailer],
  ['domain mailer', (a) => a.domainMailer],
];

/** One probe per kind of A's mailers. */
const perMailer = (what: string, path: (id: string) => string, body?: (id: string) => object): Row =>
  row(
    ...MAILERS.map(([kind, id]) =>
      refused(
        `${what} A's ${kind}`,
        ({ a }) => path(id(a)),
        MailerErrorText.mailerNotFound,
        body && (({ a }) => ({ ...body(id(a)) })),
      ),
    ),
  );

/** Backfill routes under one base (the current one and the legacy alias). */
function backfill(base: (mailer: string) => string): Record<string, Row> {
  const job = BackfillErrorText.jobNotFound;
  const b = base(':mailerID');
  return {
    [`POST ${b}`]: row(
      refused(
        "starts a backfill of A's IMAP mailer",
        ({ a }) => base(a.imapMailer),
        BackfillErrorText.mailerNotFound,
        () => ({ count: 5 }),
      ),
    ),
    [`GET ${b}/:jobId`]: row(
      refused("reads A's job under A's mailer", ({ a }) => `${base(a.imapMailer)}/${a.job}`, job),
      refused("reads A's job under its own mailer", ({ a, b }) => `${base(b.imapMailer)}/${a.job}`, job),
    ),
    [`POST ${b}/:jobId/abort`]: row(
      refused("aborts A's job under A's mailer", ({ a }) => `${base(a.imapMailer)}/${a.job}/abort`, job),
      refused(
        "aborts A's job under its own mailer",
        ({ a, b }) => `${base(b.imapMailer)}/${a.job}/abort`,
        job,
      ),
    ),
  };
}

const CREATES = 'creates a resource of the caller and names nothing that exists';
const { templateNotFound } = ErrorText;
const { domainNotFound } = DomainErrorText;
const { mailerNotFound } = MailerErrorText;
const { webhookNotFound, deliveryNotFound } = WebhookErrorText;
const incomingNotFound = InboundErrorText.domainNotFound;
const send = '/v1/email/send';

export const ISOLATION_TABLE: Record<string, Row> = {
  // Send
  [`POST ${send}`]: row(
    ...MAILERS.filter(([kind]) => kind !== 'IMAP mailer').map(([kind, id]) =>
      refused(
        `sends with A's ${kind}`,
        () => send,
        mailerNotFound,
        ({ a }) => ({
          from: { email: `x@${a.domain}` },
          to: [{ email: 'to@example.org' }],
          mailer_id: id(a),
          subject: 'S',
          content: [{ type: 'text/plain', value: 'x' }],
        }),
      ),
    ),
    refused(
      "sends A's template with its own mailer",
      () => send,
      templateNotFound,
      ({ a, b }) => ({
        from: { email: `x@${b.domain}` },
        to: [{ email: 'to@example.org' }],
        mailer_id: b.domainMailer,
        template_id: a.template,
      }),
    ),
  ),
  [`POST ${send}/:ref_id/cancel`]: row(
    refused("cancels A's send", ({ a }) => `${send}/${a.refId}/cancel`, ErrorText.sendNotFound),
  ),
  // Templates
  'POST /v1/email/template': { exempt: CREATES },
  'PUT /v1/email/template': row(
    refused(
      "updates A's template",
      () => '/v1/email/template',
      templateNotFound,
      ({ a }) => ({
        template_id: a.template,
        name: 'taken over',
      }),
    ),
  ),
  'GET /v1/email/template/:id': row(
    refused("reads A's template", ({ a }) => `/v1/email/template/${a.template}`, templateNotFound),
  ),
  'DELETE /v1/email/template/:id': row(
    refused("deletes A's template", ({ a }) => `/v1/email/template/${a.template}`, templateNotFound),
  ),
  'GET /v1/email/templates': row(
    empty('lists templates', () => '/v1/email/templates?pageSize=50', 'templates'),
  ),
  // Logs
  // A live stream, not an answer a probe could read; B's stream never carries A's events
  // (filters or not): test/events-stream.test.ts.
  'GET /v1/events/stream': {
    exempt: "a live stream of the caller's own events only; isolation tested in test/events-stream.test.ts",
  },
  'GET /v1/email/logs': row(
    empty('lists logs', () => '/v1/email/logs', 'data'),
    empty("filters logs by A's refId", ({ a }) => `/v1/email/logs?refId=${a.refId}`, 'data'),
    empty("filters logs by A's recipient", ({ a }) => `/v1/email/logs?email=${a.recipient}`, 'data'),
    empty("filters logs by A's campaign", ({ a }) => `/v1/email/logs?campaignId=${a.campaign}`, 'data'),
    empty(
      "filters logs by A's recipient domain",
      ({ a }) => `/v1/email/logs?domain=${a.recipient.split('@')[1]}`,
      'data',
    ),
  ),
  // A's send's timeline reads as no such message.
  'GET /v1/email/logs/:refId/events': row(
    refused(
      "reads A's send's events",
      ({ a }) => `/v1/email/logs/${a.refId}/events`,
      ErrorText.messageNotFound,
    ),
  ),
  // Stats: B's own counts, all zero, also filtered by A's mailer, sending domain or campaign.
  'GET /v1/stats': row(
    zeroStats("B's stats", () => '/v1/stats'),
    zeroStats("B's stats filtered by A's mailer", ({ a }) => `/v1/stats?mailer_id=${a.domainMailer}`),
    zeroStats("B's stats filtered by A's sending domain", ({ a }) => `/v1/stats?domain=${a.domain}`),
    zeroStats("B's stats filtered by A's campaign", ({ a }) => `/v1/stats?campaignId=${a.campaign}`),
  ),
  // Suppressions: B's are its own; A's suppression stays (the stored rows are compared).
  'POST /v1/email/subscribe': row({
    what: 'lifts the suppression A has',
    path: () => '/v1/email/subscribe',
    body: ({ a }) => ({ email: a.suppressed }),
    status: 200,
  }),
  'POST /v1/email/unsubscribe': row({
    what: 'suppresses the address A suppressed',
    path: () => '/v1/email/unsubscribe',
    body: ({ a }) => ({ email: a.suppressed }),
    status: 200,
    undo: (as, _res, { a }) => as.post('/v1/email/subscribe', { email: a.suppressed }),
  }),
  'GET /v1/suppressions': row(
    empty('lists suppressions', () => '/v1/suppressions?pageSize=50', 'data'),
    empty(
      'searches for the address A suppressed',
      ({ a }) => `/v1/suppressions?email=${a.suppressed}`,
      'data',
    ),
  ),
  'GET /v1/suppressions/:email': row(
    refused(
      "reads A's suppression",
      ({ a }) => `/v1/suppressions/${encodeURIComponent(a.suppressed)}`,
      SuppressionErrorText.notFound,
    ),
  ),
  'DELETE /v1/suppressions/:email': row(
    refused(
      "removes A's suppression",
      ({ a }) => `/v1/suppressions/${encodeURIComponent(a.suppressed)}`,
      SuppressionErrorText.notFound,
    ),
  ),
  'POST /v1/suppressions': row({
    what: 'suppresses the address A suppressed, as new for B',
    path: () => '/v1/suppressions',
    body: ({ a }) => ({ emails: [a.suppressed] }),
    status: 200,
    shows: (body) => {
      if (body.added !== 1 || body.existing !== 0)
        throw new Error(`expected added 1, got ${JSON.stringify(body)}`);
    },
    undo: (as, _res, { a }) => as.delete(`/v1/suppressions/${encodeURIComponent(a.suppressed)}`),
  }),
  // Domains
  'POST /v1/domain/add': row({
    what: "adds A's domain name as its own",
    path: () => '/v1/domain/add',
    body: ({ a }) => ({ domain: a.domain }),
    status: 201,
    undo: (as, res) => as.delete(`/v1/domain/${(res.body.data as { domain: string }).domain}`),
  }),
  'PUT /v1/domain/verify/:domain': row(
    refused("verifies A's domain", ({ a }) => `/v1/domain/verify/${a.domain}`, domainNotFound),
  ),
  'GET /v1/domain/:domain': row(
    refused("reads A's domain", ({ a }) => `/v1/domain/${a.domain}`, domainNotFound),
  ),
  'DELETE /v1/domain/:domain': row(
    refused("deletes A's domain", ({ a }) => `/v1/domain/${a.domain}`, domainNotFound),
  ),
  'GET /v1/domains': row(listed('lists domains', '/v1/domains?pageSize=50')),
  // Domain report summaries (DMARC, TLS-RPT): A's domain reads as not found.
  'GET /v1/domain/:domain/dmarc': row(
    refused("reads A's DMARC summary", ({ a }) => `/v1/domain/${a.domain}/dmarc`, domainNotFound),
  ),
  'GET /v1/domain/:domain/tls-reports': row(
    refused("reads A's TLS report summary", ({ a }) => `/v1/domain/${a.domain}/tls-reports`, domainNotFound),
  ),
  // Reputation and automatic pause
  'GET /v1/domain/:domain/reputation': row(
    refused("reads A's domain reputation", ({ a }) => `/v1/domain/${a.domain}/reputation`, domainNotFound),
  ),
  'POST /v1/domain/:domain/resume': row(
    refused("resumes A's domain", ({ a }) => `/v1/domain/${a.domain}/resume`, domainNotFound),
  ),
  // Mailers
  'POST /v1/mailer/smtp': { exempt: CREATES },
  'POST /v1/smtpbasic/verify': { exempt: CREATES },
  'POST /v1/mailer/imap': { exempt: CREATES },
  'POST /v1/imapbasic/verify': { exempt: CREATES },
  'POST /v1/mailer/sparkpost': { exempt: CREATES },
  'PUT /v1/mailer/smtp': perMailer(
    'updates (SMTP)',
    () => '/v1/mailer/smtp',
    (id) => ({ mailer_id: id, name: 'taken over' }),
  ),
  'PUT /v1/mailer/imap': perMailer(
    'updates (IMAP)',
    () => '/v1/mailer/imap',
    (id) => ({ mailer_id: id, name: 'taken over' }),
  ),
  'PUT /v1/mailer/sparkpost': perMailer(
    'updates (SparkPost)',
    () => '/v1/mailer/sparkpost',
    (id) => ({ mailer_id: id, name: 'taken over', config: { api_key: 'taken-over' } }),
  ),
  'GET /v1/mailers': row(listed('lists mailers', '/v1/mailers?pageSize=50')),
  'GET /v1/mailer/:mailer_id': perMailer('reads', (id) => `/v1/mailer/${id}`),
  'DELETE /v1/mailer/:mailer_id': perMailer('deletes', (id) => `/v1/mailer/${id}`),
  'POST /v1/mailer/:mailer_id/disable': perMailer('disables', (id) => `/v1/mailer/${id}/disable`),
  'POST /v1/mailer/:mailer_id/enable': perMailer('enables', (id) => `/v1/mailer/${id}/enable`),
  // OAuth
  'POST /v1/oauth/apps': row({
    what: "registers A's OAuth client as its own app",
    path: () => '/v1/oauth/apps',
    body: ({ a }) => ({
      provider: 'google',
      client_id: a.oauthClientId,
      client_secret: 'another-secret',
      redirect_uri: 'https://b.example.test/callback',
    }),
    status: 201,
    undo: (as, res) => as.delete(`/v1/oauth/apps/${res.body.app_id}`),
  }),
  'GET /v1/oauth/apps': row(listed('lists OAuth apps', '/v1/oauth/apps')),
  // A's app is in use (A itself would get 409): B must not learn even that it exists.
  'DELETE /v1/oauth/apps/:app_id': row(
    refused("deletes A's OAuth app", ({ a }) => `/v1/oauth/apps/${a.oauthApp}`, OAuthErrorText.appNotFound),
  ),
  'POST /v1/oauth/login': row(
    refused(
      "logs in with A's app",
      () => '/v1/oauth/login',
      OAuthErrorText.appNotFound,
      ({ a }) => ({
        app_id: a.oauthApp,
      }),
    ),
    refused(
      "re-authenticates A's OAuth mailer with its own app",
      () => '/v1/oauth/login',
      mailerNotFound,
      ({ a, b }) => ({ app_id: b.oauthApp, mailer_id: a.oauthMailer }),
    ),
    refused(
      "gives a refresh token for A's OAuth mailer",
      () => '/v1/oauth/login',
      mailerNotFound,
      ({ a, b }) => ({ app_id: b.oauthApp, mailer_id: a.oauthMailer, token: 'refresh-token' }),
    ),
  ),
  'GET /v1/oauth/callback': {
    exempt:
      'served without a key: the signed state names the tenant (oauth.test.ts refuses a state tampered to name another tenant)',
  },
  'POST /v1/oauth/activate': row(
    refused(
      "deactivates A's OAuth mailer",
      () => '/v1/oauth/activate',
      mailerNotFound,
      ({ a }) => ({
        mailer_id: a.oauthMailer,
        active: false,
      }),
    ),
    // A gets 422 (not an OAuth mailer); B must get the same 404 as for an unknown id.
    refused(
      "activates A's SMTP mailer",
      () => '/v1/oauth/activate',
      mailerNotFound,
      ({ a }) => ({
        mailer_id: a.smtpMailer,
      }),
    ),
  ),
  // Tenant webhooks: one per event type and tenant; B has none of its own.
  'POST /v1/webhook/register': row({
    what: 'registers the event type A has a webhook for',
    path: () => '/v1/webhook/register',
    body: ({ b }) => webhookBody(b.hookUrl),
    status: 201,
    undo: (as) => as.delete('/v1/webhook/delete', { event: 'EMAIL_EVENT' }),
  }),
  'PUT /v1/webhook/update': row(
    refused(
      "deactivates A's webhook",
      () => '/v1/webhook/update',
      webhookNotFound,
      () => ({
        event: 'EMAIL_EVENT',
        active: false,
      }),
    ),
  ),
  'GET /v1/webhook': row(empty('lists webhooks', () => '/v1/webhook', 'webhooks')),
  'DELETE /v1/webhook/delete': row(
    refused(
      "deletes A's webhook",
      () => '/v1/webhook/delete',
      webhookNotFound,
      () => ({ event: 'EMAIL_EVENT' }),
    ),
  ),
  'POST /v1/webhook/rotate-secret': row(
    refused(
      "rotates A's signing secret",
      () => '/v1/webhook/rotate-secret',
      webhookNotFound,
      () => ({
        event: 'EMAIL_EVENT',
      }),
    ),
  ),
  'GET /v1/webhook/deliveries': row(
    empty('lists deliveries', () => '/v1/webhook/deliveries', 'data'),
    empty("filters deliveries by A's event", () => '/v1/webhook/deliveries?event=MAIL_DELIVERED', 'data'),
  ),
  'GET /v1/webhook/deliveries/:id': row(
    refused("reads A's delivery", ({ a }) => `/v1/webhook/deliveries/${a.delivery}`, deliveryNotFound),
  ),
  'POST /v1/webhook/deliveries/:id/replay': row(
    refused(
      "replays A's delivery",
      ({ a }) => `/v1/webhook/deliveries/${a.delivery}/replay`,
      deliveryNotFound,
    ),
  ),
  // Inbound
  'POST /v1/inbound/relay_webhook': row(
    refused(
      "routes A's incoming domain to itself",
      () => '/v1/inbound/relay_webhook',
      incomingNotFound,
      ({ a, b }) => ({ domain: a.domain, url: b.hookUrl, method: 'POST' }),
    ),
  ),
  'PUT /v1/inbound/update/:domain': row(
    refused(
      "updates A's incoming domain",
      ({ a }) => `/v1/inbound/update/${a.domain}`,
      incomingNotFound,
      () => ({
        wildcard: true,
      }),
    ),
  ),
  'GET /v1/inbound/:domain': row(
    refused("reads A's incoming domain", ({ a }) => `/v1/inbound/${a.domain}`, incomingNotFound),
  ),
  'POST /v1/inbound/username': row(
    refused(
      "adds an address to A's incoming domain",
      () => '/v1/inbound/username',
      incomingNotFound,
      ({ a }) => ({
        user_name: 'intruder',
        domain: a.domain,
      }),
    ),
  ),
  'PUT /v1/inbound/username/update/:username': row(
    refused(
      "deactivates A's incoming address",
      ({ a }) => `/v1/inbound/username/update/${a.username}@${a.domain}`,
      incomingNotFound,
      ({ a }) => ({ domain: a.domain, active: false }),
    ),
  ),
  'GET /v1/inbound/username/:domain': row(
    refused("lists A's incoming addresses", ({ a }) => `/v1/inbound/username/${a.domain}`, incomingNotFound),
  ),
  // IMAP history backfill, and its legacy aliases
  ...backfill((m) => `/v1/imap/${m}/history`),
  ...backfill((m) => `/v1/${m}/backfill`),
  // API keys and the audit log (B never rotates anything, so its rotations are none)
  'POST /v1/keys': { exempt: CREATES },
  'GET /v1/keys': row(listed('lists API keys', '/v1/keys')),
  'DELETE /v1/keys/:key_id': row(
    refused("revokes A's API key", ({ a }) => `/v1/keys/${a.apiKeyId}`, ErrorText.keyNotFound),
  ),
  'GET /v1/audit': row(empty('lists rotations in the audit log', () => '/v1/audit?action=rotate', 'data')),
};
