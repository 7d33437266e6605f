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

const MAILERS: Array<[string, (a: TenantA) => string]> = [
  ['SMTP mailer', (a) => a.smtpMailer],
  ['IMAP mailer', (a) => a.imapMailer],
  ['OAuth mailer', (a) => a.oauthMailer],
  ['domain mailer', (a) => a.domainMailer],
];

/** One probe per kind of A's mailers. */
const perMailer = (
  what: string,
  path: (id: string) => string,
  body?: (id: string) => Record<string, unknown>,
): Probe[] =>
  MAILERS.map(([kind, id]) => ({
    what: `${what} A's ${kind}`,
    path: ({ a }) => path(id(a)),
    ...(body ? { body: ({ a }: Fixture) => body(id(a)) } : {}),
    status: 404,
    error: MailerErrorText.mailerNotFound,
  }));

const emptyList = (field: string) => (body: Record<string, unknown>) => {
  if (!Array.isArray(body[field]) || (body[field] as unknown[]).length !== 0)
    throw new Error(`expected an empty ${field}, got ${JSON.stringify(body[field])}`);
};

const notFound = (error: string) => ({ status: 404, error });

/** Backfill routes under one base (the current one and the legacy alias). */
function backfill(base: (mailer: string) => string): Record<string, Row> {
  const job = BackfillErrorText.jobNotFound;
  const b = base(':mailerID');
  return {
    [`POST ${b}`]: {
      probes: [
        {
          what: "starts a backfill of A's IMAP mailer",
          path: ({ a }) => base(a.imapMailer),
          body: () => ({ count: 5 }),
          ...notFound(BackfillErrorText.mailerNotFound),
        },
      ],
    },
    [`GET ${b}/:jobId`]: {
      probes: [
        {
          what: "reads A's job under A's mailer",
          path: ({ a }) => `${base(a.imapMailer)}/${a.job}`,
          ...notFound(job),
        },
        {
          what: "reads A's job under its own mailer",
          path: ({ a, b }) => `${base(b.imapMailer)}/${a.job}`,
          ...notFound(job),
        },
      ],
    },
    [`POST ${b}/:jobId/abort`]: {
      probes: [
        {
          what: "aborts A's job under A's mailer",
          path: ({ a }) => `${base(a.imapMailer)}/${a.job}/abort`,
          ...notFound(job),
        },
        {
          what: "aborts A's job under its own mailer",
          path: ({ a, b }) => `${base(b.imapMailer)}/${a.job}/abort`,
          ...notFound(job),
        },
      ],
    },
  };
}

const CREATES = 'creates a resource of the caller and names nothing that exists';

export const ISOLATION_TABLE: Record<string, Row> = {
  // Send
  'POST /v1/email/send': {
    probes: [
      ...MAILERS.filter(([kind]) => kind !== 'IMAP mailer').map(
        ([kind, id]): Probe => ({
          what: `sends with A's ${kind}`,
          path: () => '/v1/email/send',
          body: ({ a }) => ({
            from: { email: `x@${a.domain}` },
            to: [{ email: 'to@example.org' }],
            mailer_id: id(a),
            subject: 'S',
            content: [{ type: 'text/plain', value: 'x' }],
          }),
          ...notFound(MailerErrorText.mailerNotFound),
        }),
      ),
      {
        what: "sends A's template with its own mailer",
        path: () => '/v1/email/send',
        body: ({ a, b }) => ({
          from: { email: `x@${b.domain}` },
          to: [{ email: 'to@example.org' }],
          mailer_id: b.domainMailer,
          template_id: a.template,
        }),
        ...notFound(ErrorText.templateNotFound),
      },
    ],
  },
  // Templates
  'POST /v1/email/template': { exempt: CREATES },
  'PUT /v1/email/template': {
    probes: [
      {
        what: "updates A's template",
        path: () => '/v1/email/template',
        body: ({ a }) => ({ template_id: a.template, name: 'taken over' }),
        ...notFound(ErrorText.templateNotFound),
      },
    ],
  },
  'GET /v1/email/template/:id': {
    probes: [
      {
        what: "reads A's template",
        path: ({ a }) => `/v1/email/template/${a.template}`,
        ...notFound(ErrorText.templateNotFound),
      },
    ],
  },
  'DELETE /v1/email/template/:id': {
    probes: [
      {
        what: "deletes A's template",
        path: ({ a }) => `/v1/email/template/${a.template}`,
        ...notFound(ErrorText.templateNotFound),
      },
    ],
  },
  'GET /v1/email/templates': {
    probes: [
      {
        what: 'lists templates',
        path: () => '/v1/email/templates?pageSize=50',
        status: 200,
        shows: emptyList('templates'),
      },
    ],
  },
  // Logs
  'GET /v1/email/logs': {
    probes: [
      { what: 'lists logs', path: () => '/v1/email/logs', status: 200, shows: emptyList('data') },
      {
        what: "filters logs by A's refId",
        path: ({ a }) => `/v1/email/logs?refId=${a.refId}`,
        status: 200,
        shows: emptyList('data'),
      },
      {
        what: "filters logs by A's recipient",
        path: ({ a }) => `/v1/email/logs?email=${a.recipient}`,
        status: 200,
        shows: emptyList('data'),
      },
      {
        what: "filters logs by A's campaign",
        path: ({ a }) => `/v1/email/logs?campaignId=${a.campaign}`,
        status: 200,
        shows: emptyList('data'),
      },
      {
        what: "filters logs by A's recipient domain",
        path: ({ a }) => `/v1/email/logs?domain=${a.recipient.split('@')[1]}`,
        status: 200,
        shows: emptyList('data'),
      },
    ],
  },
  // Suppressions: B's list is its own; A's suppression stays (the stored rows are compared).
  'POST /v1/email/subscribe': {
    probes: [
      {
        what: 'lifts the suppression A has',
        path: () => '/v1/email/subscribe',
        body: ({ a }) => ({ email: a.suppressed }),
        status: 200,
      },
    ],
  },
  'POST /v1/email/unsubscribe': {
    probes: [
      {
        what: 'suppresses the address A suppressed',
        path: () => '/v1/email/unsubscribe',
        body: ({ a }) => ({ email: a.suppressed }),
        status: 200,
        undo: (as, _res, { a }) => as.post('/v1/email/subscribe', { email: a.suppressed }),
      },
    ],
  },
  // Domains
  'POST /v1/domain/add': {
    probes: [
      {
        what: "adds A's domain name as its own",
        path: () => '/v1/domain/add',
        body: ({ a }) => ({ domain: a.domain }),
        status: 201,
        undo: (as, res) => as.delete(`/v1/domain/${(res.body.data as { domain: string }).domain}`),
      },
    ],
  },
  'PUT /v1/domain/verify/:domain': {
    probes: [
      {
        what: "verifies A's domain",
        path: ({ a }) => `/v1/domain/verify/${a.domain}`,
        ...notFound(DomainErrorText.domainNotFound),
      },
    ],
  },
  'GET /v1/domain/:domain': {
    probes: [
      {
        what: "reads A's domain",
        path: ({ a }) => `/v1/domain/${a.domain}`,
        ...notFound(DomainErrorText.domainNotFound),
      },
    ],
  },
  'DELETE /v1/domain/:domain': {
    probes: [
      {
        what: "deletes A's domain",
        path: ({ a }) => `/v1/domain/${a.domain}`,
        ...notFound(DomainErrorText.domainNotFound),
      },
    ],
  },
  'GET /v1/domains': {
    probes: [{ what: 'lists domains', path: () => '/v1/domains?pageSize=50', status: 200 }],
  },
  // Mailers
  'POST /v1/mailer/smtp': { exempt: CREATES },
  'POST /v1/smtpbasic/verify': { exempt: CREATES },
  'POST /v1/mailer/imap': { exempt: CREATES },
  'POST /v1/imapbasic/verify': { exempt: CREATES },
  'PUT /v1/mailer/smtp': {
    probes: perMailer(
      'updates (SMTP)',
      () => '/v1/mailer/smtp',
      (id) => ({ mailer_id: id, name: 'taken over' }),
    ),
  },
  'PUT /v1/mailer/imap': {
    probes: perMailer(
      'updates (IMAP)',
      () => '/v1/mailer/imap',
      (id) => ({ mailer_id: id, name: 'taken over' }),
    ),
  },
  'GET /v1/mailers': {
    probes: [{ what: 'lists mailers', path: () => '/v1/mailers?pageSize=50', status: 200 }],
  },
  'GET /v1/mailer/:mailer_id': { probes: perMailer('reads', (id) => `/v1/mailer/${id}`) },
  'DELETE /v1/mailer/:mailer_id': { probes: perMailer('deletes', (id) => `/v1/mailer/${id}`) },
  'POST /v1/mailer/:mailer_id/disable': { probes: perMailer('disables', (id) => `/v1/mailer/${id}/disable`) },
  'POST /v1/mailer/:mailer_id/enable': { probes: perMailer('enables', (id) => `/v1/mailer/${id}/enable`) },
  // OAuth
  'POST /v1/oauth/apps': {
    probes: [
      {
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
      },
    ],
  },
  'GET /v1/oauth/apps': {
    probes: [{ what: 'lists OAuth apps', path: () => '/v1/oauth/apps', status: 200 }],
  },
  'DELETE /v1/oauth/apps/:app_id': {
    probes: [
      // A's app is in use (A itself would get 409): B must not learn even that it exists.
      {
        what: "deletes A's OAuth app",
        path: ({ a }) => `/v1/oauth/apps/${a.oauthApp}`,
        ...notFound(OAuthErrorText.appNotFound),
      },
    ],
  },
  'POST /v1/oauth/login': {
    probes: [
      {
        what: "logs in with A's app",
        path: () => '/v1/oauth/login',
        body: ({ a }) => ({ app_id: a.oauthApp }),
        ...notFound(OAuthErrorText.appNotFound),
      },
      {
        what: "re-authenticates A's OAuth mailer with its own app",
        path: () => '/v1/oauth/login',
        body: ({ a, b }) => ({ app_id: b.oauthApp, mailer_id: a.oauthMailer }),
        ...notFound(MailerErrorText.mailerNotFound),
      },
      {
        what: "gives a refresh token for A's OAuth mailer",
        path: () => '/v1/oauth/login',
        body: ({ a, b }) => ({ app_id: b.oauthApp, mailer_id: a.oauthMailer, token: 'refresh-token' }),
        ...notFound(MailerErrorText.mailerNotFound),
      },
    ],
  },
  'GET /v1/oauth/callback': {
    exempt:
      'served without a key: the signed state names the tenant (oauth.test.ts refuses a state tampered to name another tenant)',
  },
  'POST /v1/oauth/activate': {
    probes: [
      {
        what: "deactivates A's OAuth mailer",
        path: () => '/v1/oauth/activate',
        body: ({ a }) => ({ mailer_id: a.oauthMailer, active: false }),
        ...notFound(MailerErrorText.mailerNotFound),
      },
      // A gets 422 (not an OAuth mailer); B must get the same 404 as for an unknown id.
      {
        what: "activates A's SMTP mailer",
        path: () => '/v1/oauth/activate',
        body: ({ a }) => ({ mailer_id: a.smtpMailer }),
        ...notFound(MailerErrorText.mailerNotFound),
      },
    ],
  },
  // Tenant webhooks: one per event type and tenant; B has none of its own.
  'POST /v1/webhook/register': {
    probes: [
      {
        what: 'registers the event type A has a webhook for',
        path: () => '/v1/webhook/register',
        body: ({ b }) => webhookBody(b.hookUrl),
        status: 201,
        undo: (as) => as.delete('/v1/webhook/delete', { event: 'EMAIL_EVENT' }),
      },
    ],
  },
  'PUT /v1/webhook/update': {
    probes: [
      {
        what: "deactivates A's webhook",
        path: () => '/v1/webhook/update',
        body: () => ({ event: 'EMAIL_EVENT', active: false }),
        ...notFound(WebhookErrorText.webhookNotFound),
      },
    ],
  },
  'GET /v1/webhook': {
    probes: [
      { what: 'lists webhooks', path: () => '/v1/webhook', status: 200, shows: emptyList('webhooks') },
    ],
  },
  'DELETE /v1/webhook/delete': {
    probes: [
      {
        what: "deletes A's webhook",
        path: () => '/v1/webhook/delete',
        body: () => ({ event: 'EMAIL_EVENT' }),
        ...notFound(WebhookErrorText.webhookNotFound),
      },
    ],
  },
  'POST /v1/webhook/rotate-secret': {
    probes: [
      {
        what: "rotates A's signing secret",
        path: () => '/v1/webhook/rotate-secret',
        body: () => ({ event: 'EMAIL_EVENT' }),
        ...notFound(WebhookErrorText.webhookNotFound),
      },
    ],
  },
  'GET /v1/webhook/deliveries': {
    probes: [
      {
        what: 'lists deliveries',
        path: () => '/v1/webhook/deliveries',
        status: 200,
        shows: emptyList('data'),
      },
      {
        what: "filters deliveries by A's event",
        path: () => '/v1/webhook/deliveries?event=MAIL_DELIVERED',
        status: 200,
        shows: emptyList('data'),
      },
    ],
  },
  'GET /v1/webhook/deliveries/:id': {
    probes: [
      {
        what: "reads A's delivery",
        path: ({ a }) => `/v1/webhook/deliveries/${a.delivery}`,
        ...notFound(WebhookErrorText.deliveryNotFound),
      },
    ],
  },
  'POST /v1/webhook/deliveries/:id/replay': {
    probes: [
      {
        what: "replays A's delivery",
        path: ({ a }) => `/v1/webhook/deliveries/${a.delivery}/replay`,
        ...notFound(WebhookErrorText.deliveryNotFound),
      },
    ],
  },
  // Inbound
  'POST /v1/inbound/relay_webhook': {
    probes: [
      {
        what: "routes A's incoming domain to itself",
        path: () => '/v1/inbound/relay_webhook',
        body: ({ a, b }) => ({ domain: a.domain, url: b.hookUrl, method: 'POST' }),
        ...notFound(InboundErrorText.domainNotFound),
      },
    ],
  },
  'PUT /v1/inbound/update/:domain': {
    probes: [
      {
        what: "updates A's incoming domain",
        path: ({ a }) => `/v1/inbound/update/${a.domain}`,
        body: () => ({ wildcard: true }),
        ...notFound(InboundErrorText.domainNotFound),
      },
    ],
  },
  'GET /v1/inbound/:domain': {
    probes: [
      {
        what: "reads A's incoming domain",
        path: ({ a }) => `/v1/inbound/${a.domain}`,
        ...notFound(InboundErrorText.domainNotFound),
      },
    ],
  },
  'POST /v1/inbound/username': {
    probes: [
      {
        what: "adds an address to A's incoming domain",
        path: () => '/v1/inbound/username',
        body: ({ a }) => ({ user_name: 'intruder', domain: a.domain }),
        ...notFound(InboundErrorText.domainNotFound),
      },
    ],
  },
  'PUT /v1/inbound/username/update/:username': {
    probes: [
      {
        what: "deactivates A's incoming address",
        path: ({ a }) => `/v1/inbound/username/update/${a.username}@${a.domain}`,
        body: ({ a }) => ({ domain: a.domain, active: false }),
        ...notFound(InboundErrorText.domainNotFound),
      },
    ],
  },
  'GET /v1/inbound/username/:domain': {
    probes: [
      {
        what: "lists A's incoming addresses",
        path: ({ a }) => `/v1/inbound/username/${a.domain}`,
        ...notFound(InboundErrorText.domainNotFound),
      },
    ],
  },
  // IMAP history backfill, and its legacy aliases
  ...backfill((m) => `/v1/imap/${m}/history`),
  ...backfill((m) => `/v1/${m}/backfill`),
};
