/**
 * The gateway's API as data: one entry per route it serves, with the zod schema that validates
 * the request (the same one the route parses with), an example request and an example answer.
 * document.ts turns this into OpenAPI 3.1; test/openapi.test.ts checks that every route of the
 * express app is here and that every example validates against its schema.
 */
import {
  AddDomainSchema,
  AddSuppressionsSchema,
  AdminIssueKeySchema,
  AuditQuerySchema,
  CreateApiKeySchema,
  CreateImapMailerSchema,
  CreateInboundUsernameSchema,
  CreateOAuthAppSchema,
  CreateSmtpMailerSchema,
  CreateSparkPostMailerSchema,
  CreateTemplateSchema,
  CreateTenantSchema,
  DMARC_SOURCES_MAX,
  DeliverabilityReportsQuerySchema,
  DeliveriesQuerySchema,
  DmarcSummaryResponseSchema,
  EventStreamQuerySchema,
  LogsQuerySchema,
  OAuthActivateSchema,
  OAuthCallbackQuerySchema,
  OAuthLoginSchema,
  PageQuerySchema,
  RegisterWebhookSchema,
  RelayWebhookSchema,
  SendRequestSchema,
  StartBackfillSchema,
  StatsQuerySchema,
  SuppressionRequestSchema,
  SuppressionsQuerySchema,
  TlsReportsResponseSchema,
  UpdateImapMailerSchema,
  UpdateInboundDomainSchema,
  UpdateInboundUsernameSchema,
  UpdateSmtpMailerSchema,
  UpdateSparkPostMailerSchema,
  UpdateTemplateSchema,
  UpdateWebhookSchema,
  WebhookEventBodySchema,
  emptyTracking,
} from '@mailyard/contracts';
import type {
  AbortBackfillResponse,
  BackfillStatusResponse,
  CreateApiKeyResponse,
  CreateKeyResponse,
  CreateTenantResponse,
  DmarcSummaryResponse,
  InboundDomainResponse,
  InboundUsernamesResponse,
  ListApiKeysResponse,
  ListAuditResponse,
  StartBackfillResponse,
  TlsReportsResponse,
} from '@mailyard/contracts';
import type { ZodTypeAny } from 'zod';

export type Auth = 'apiKey' | 'admin' | 'none';

export interface Operation {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Express path, `:name` parameters. */
  path: string;
  tag: string;
  summary: string;
  auth: Auth;
  body?: { schema: ZodTypeAny; example: unknown };
  query?: { schema: ZodTypeAny; example: Record<string, string> };
  headers?: Array<{ name: string; description: string }>;
  /**
   * `contentType`: the success answer's media type when not JSON (text/plain for a string example).
   * `schema`: the answer's zod schema where contracts has one (shown in the document; the example must match).
   */
  success: {
    status: number;
    description: string;
    example: unknown;
    contentType?: string;
    schema?: ZodTypeAny;
  };
  /** Error statuses besides 401/429/500/503 that every authenticated route may answer. */
  errors: number[];
}

const MAILER = 'smtp_01JD5K7ZQ3X0V8Y2N4M6P8R0TB';
const T = '2026-01-05T10:00:00.000Z';
const OAUTH_APP = 'oauthapp_01JD5K7ZQ3X0V8Y2N4M6P8R0TC';
const page = (data: unknown[], extra: Record<string, unknown> = {}) => ({
  success: true,
  data,
  nextPageToken: null,
  totalCount: data.length,
  ...extra,
});

const suppression = {
  email: 'jane@example.org',
  reason: 'hard_bounce',
  ref_id: '01JD5K7ZQ3X0V8Y2N4M6P8R0TF',
  created_at: T,
};
const smtpCreate = {
  name: 'Office relay',
  email: 'hello@example.com',
  connection_type: 'basic',
  config: { host: 'smtp.example.com', port: 587, username: 'hello', password: 'app-password', secure: 'Tls' },
};
const imapCreate = {
  name: 'Support inbox',
  email: 'support@example.com',
  connection_type: 'basic',
  config: {
    host: 'imap.example.com',
    port: 993,
    username: 'support',
    password: 'app-password',
    secure: 'SSL',
  },
  webhook: { url: 'https://hooks.example.com/inbox', method: 'POST' },
};
const reputationData = {
  domain: 'example.com',
  window: 1000,
  sent: 1000,
  invalid_recipient_bounces: 62,
  complaints: 0,
  bounce_rate: 0.062,
  complaint_rate: 0,
  thresholds: { bounce_rate: 0.05, complaint_rate: 0.001, min_volume: 500 },
  paused: {
    scope: 'domain',
    metric: 'invalid_recipient_bounce_rate',
    rate: 0.062,
    window: 1000,
    threshold: 0.05,
    paused_at: '2026-01-01T00:00:00.000Z',
    message: 'Sending is paused for example.com: 6.2% invalid-recipient bounces over the last 1000 emails',
  },
  mailers: [
    {
      mailer_id: 'domain_01JD5K7ZQ3X0V8Y2N4M6P8R0TC',
      sent: 1000,
      invalid_recipient_bounces: 62,
      complaints: 0,
      bounce_rate: 0.062,
      complaint_rate: 0,
      paused: null,
    },
  ],
};

const domainData = {
  domain: 'example.com',
  unicode_domain: 'example.com',
  mailer_id: 'domain_01JD5K7ZQ3X0V8Y2N4M6P8R0TC',
  verified: false,
  records: [
    {
      purpose: 'dkim',
      type: 'TXT',
      name: 'mailyard._domainkey.example.com',
      value: 'v=DKIM1; k=rsa; p=MIIB...',
      required: true,
      verified: false,
      reason: 'no TXT record found',
    },
  ],
  selector: 'mailyard',
  state: 'active',
  custom_args: null,
  is_tenant_domain: false,
  is_tenant_subdomain: false,
  shared_with_subaccounts: false,
  ips: [],
  last_checked_at: null,
  verified_at: null,
  created_at: T,
  updated_at: T,
};
const mailerView = {
  mailer_id: MAILER,
  name: 'Office relay',
  email: 'hello@example.com',
  config_type: 'smtp',
  connection_type: 'basic',
  state: 'active',
  state_reason: null,
  config: { host: 'smtp.example.com', port: 587, username: 'hello', secure: 'Tls', password_set: true },
  created_at: T,
  updated_at: T,
};
const SPARKPOST_MAILER = 'sparkpost_01JD5K7ZQ3X0V8Y2N4M6P8R0TJ';
const sparkPostCallback = {
  url: `https://track.example.com/callbacks/sparkpost/${SPARKPOST_MAILER}`,
  username: SPARKPOST_MAILER,
};
const delivery = {
  delivery_id: 'whd_01JD5K7ZQ3X0V8Y2N4M6P8R0TD',
  webhook_id: 'email_events_01JD5K7ZQ3X0V8Y2N4M6P8R0TE',
  event_types: ['MAIL_DELIVERED'],
  status: 'delivered',
  attempts: [{ attempt: 1, at: T, status_code: 200, latency_ms: 41, error: '' }],
  next_attempt_at: null,
  dropped_reason: '',
  replay_of: null,
  created_at: T,
  updated_at: T,
};
const emailEventsOn = { events: { delivery: true, bounce: true } };

export const OPERATIONS: Operation[] = [
  // Send
  {
    method: 'POST',
    path: '/v1/email/send',
    tag: 'Send',
    summary: 'Send an email (accepted durably, delivered asynchronously)',
    auth: 'apiKey',
    headers: [
      {
        name: 'Idempotency-Key',
        description: 'Optional, 1 to 255 printable ASCII characters: a repeat returns the first outcome',
      },
    ],
    body: {
      schema: SendRequestSchema,
      example: {
        from: { email: 'hello@example.com', name: 'Example' },
        to: [{ email: 'jane@example.org', name: 'Jane' }],
        subject: 'Welcome, {{name}}',
        content: [{ type: 'text/html', value: '<p>Hello {{name}}</p>' }],
        substitutions: { 'jane@example.org': { name: 'Jane' } },
        mailer_id: MAILER,
        settings: { open_tracking: { enable: true } },
      },
    },
    success: {
      status: 200,
      description: 'Queued (`message: "scheduled"` when `send_at` is ahead)',
      example: { success: true, ref_id: '01JD5K7ZQ3X0V8Y2N4M6P8R0TF', message: 'queued' },
    },
    errors: [400, 404, 409, 413, 422],
  },
  {
    method: 'POST',
    path: '/v1/email/send/:ref_id/cancel',
    tag: 'Send',
    summary: 'Cancel a scheduled send (copies not yet released become CANCELLED)',
    auth: 'apiKey',
    success: {
      status: 200,
      description: 'Cancelled; `cancelled` counts the log entries (recipients of copies) now CANCELLED',
      example: { success: true, message: 'Send cancelled', cancelled: 2 },
    },
    errors: [404, 409],
  },
  // Templates
  {
    method: 'POST',
    path: '/v1/email/template',
    tag: 'Templates',
    summary: 'Create a template',
    auth: 'apiKey',
    body: {
      schema: CreateTemplateSchema,
      example: {
        name: 'Welcome',
        subject: 'Hi {{name}}',
        content: [{ type: 'text/plain', value: 'Hello {{name}}' }],
      },
    },
    success: {
      status: 201,
      description: 'Created',
      example: { success: true, template_id: 'template_01JD5K7ZQ3X0V8Y2N4M6P8R0TG' },
    },
    errors: [400],
  },
  {
    method: 'PUT',
    path: '/v1/email/template',
    tag: 'Templates',
    summary: 'Update a template (only the given fields)',
    auth: 'apiKey',
    body: {
      schema: UpdateTemplateSchema,
      example: { template_id: 'template_01JD5K7ZQ3X0V8Y2N4M6P8R0TG', subject: 'Hello {{name}}' },
    },
    success: {
      status: 200,
      description: 'Updated',
      example: { success: true, template_id: 'template_01JD5K7ZQ3X0V8Y2N4M6P8R0TG' },
    },
    errors: [400, 404],
  },
  {
    method: 'GET',
    path: '/v1/email/template/:id',
    tag: 'Templates',
    summary: 'Get a template',
    auth: 'apiKey',
    success: {
      status: 200,
      description: 'The template',
      example: {
        success: true,
        template: {
          name: 'Welcome',
          subject: 'Hi {{name}}',
          content: [{ type: 'text/plain', value: 'Hello {{name}}' }],
        },
      },
    },
    errors: [404],
  },
  {
    method: 'DELETE',
    path: '/v1/email/template/:id',
    tag: 'Templates',
    summary: 'Delete a template',
    auth: 'apiKey',
    success: { status: 200, description: 'Deleted', example: { success: true } },
    errors: [404],
  },
  {
    method: 'GET',
    path: '/v1/email/templates',
    tag: 'Templates',
    summary: 'List templates',
    auth: 'apiKey',
    query: { schema: PageQuerySchema, example: { pageSize: '20' } },
    success: {
      status: 200,
      description: 'A page of templates',
      example: {
        success: true,
        templates: [{ id: 'template_01JD5K7ZQ3X0V8Y2N4M6P8R0TG', name: 'Welcome' }],
        next_page_token: null,
      },
    },
    errors: [400],
  },
  // Logs and suppressions
  {
    method: 'GET',
    path: '/v1/email/logs',
    tag: 'Logs',
    summary: 'Query email logs (one entry per recipient)',
    auth: 'apiKey',
    query: {
      schema: LogsQuerySchema,
      example: { status: 'MAIL_DELIVERED', startDate: '2026-01-01', pageSize: '50' },
    },
    success: {
      status: 200,
      description: 'A page of log entries',
      example: page([
        {
          ref_id: '01JD5K7ZQ3X0V8Y2N4M6P8R0TF',
          recipient: 'jane@example.org',
          recipient_type: 'to',
          status: 'MAIL_DELIVERED',
          subject: 'Welcome, Jane',
          mailer_id: MAILER,
          campaign_id: null,
          message_id: '<svc_mailer_01JD5K7ZQ3X0V8Y2N4M6P8R0TF.1@mail.example.com>',
          created_at: T,
          delivered_at: T,
          last_event: 'MAIL_DELIVERED',
          failure_reason: '',
        },
      ]),
    },
    errors: [400],
  },
  {
    method: 'GET',
    path: '/v1/email/logs/:refId/events',
    tag: 'Logs',
    summary:
      "A send's events, oldest first (its timeline: SMTP answers, bounces, opens and clicks); at most 1000",
    auth: 'apiKey',
    success: {
      status: 200,
      description: 'The events, as webhooks receive them',
      example: {
        success: true,
        truncated: false,
        data: [
          {
            event: 'MAIL_DELIVERED',
            success: true,
            details: {
              ref_id: '01JD5K7ZQ3X0V8Y2N4M6P8R0TF',
              mailer_id: MAILER,
              email: ['jane@example.org'],
              custom_args: null,
              message_id: '<svc_mailer_01JD5K7ZQ3X0V8Y2N4M6P8R0TF.1@mail.example.com>',
              thread_id: '',
              webhook_id: '',
              event_at: T,
              tracking: emptyTracking(),
              failed_reason: '',
            },
          },
        ],
      },
    },
    errors: [404],
  },
  {
    method: 'GET',
    path: '/v1/events/stream',
    tag: 'Logs',
    summary: 'Live email events as Server-Sent Events (docs/api/events-stream.md)',
    auth: 'apiKey',
    query: {
      schema: EventStreamQuerySchema,
      example: {
        event: 'MAIL_DELIVERED,MAIL_BOUNCE',
        ref_id: '01JD5K7ZQ3X0V8Y2N4M6P8R0TF',
        email: 'jane@example.org',
      },
    },
    headers: [
      {
        name: 'Last-Event-ID',
        description: 'Resume after this event id; replayed while the gateway still holds it (best effort)',
      },
    ],
    success: {
      status: 200,
      description:
        'An endless text/event-stream: one event per email event (`id:` stable event id, `event:` the event type, `data:` the event object as webhooks carry it), `: heartbeat` comments every 15 s',
      contentType: 'text/event-stream',
      example:
        'retry: 3000\n: connected\n\nid: 01JD5K7ZQ3X0V8Y2N4M6P8R0TH.0\nevent: MAIL_DELIVERED\ndata: {"event":"MAIL_DELIVERED","success":true,"details":{"ref_id":"01JD5K7ZQ3X0V8Y2N4M6P8R0TF","mailer_id":"smtp_01JD5K7ZQ3X0V8Y2N4M6P8R0TB","email":["jane@example.org"],"custom_args":null,"message_id":"<svc_mailer_01JD5K7ZQ3X0V8Y2N4M6P8R0TF.1@mail.example.com>","thread_id":"","webhook_id":"","event_at":"2026-01-05T10:00:00.000000Z","tracking":{},"failed_reason":""}}\n\n',
    },
    errors: [400],
  },
  {
    method: 'GET',
    path: '/v1/stats',
    tag: 'Stats',
    summary: 'Counts per UTC day or hour (requested, delivered, bounced, opened, ...), from rollups',
    auth: 'apiKey',
    query: {
      schema: StatsQuerySchema,
      example: { startDate: '2026-01-01', endDate: '2026-01-02', granularity: 'day', domain: 'example.com' },
    },
    success: {
      status: 200,
      description: 'Every bucket of the range (zeros where nothing happened) and their totals',
      example: (() => {
        const counts = {
          requested: 120,
          delivered: 115,
          bounced: 2,
          spam: 0,
          opened: 64,
          unique_opened: 51,
          clicked: 12,
          unique_clicked: 9,
          unsubscribed: 1,
          failed: 3,
          rejected: 2,
        };
        const zero = Object.fromEntries(Object.keys(counts).map((k) => [k, 0]));
        return {
          success: true,
          data: [
            { start: '2026-01-01T00:00:00Z', ...counts },
            { start: '2026-01-02T00:00:00Z', ...zero },
          ],
          totals: counts,
        };
      })(),
    },
    errors: [400],
  },
  {
    method: 'POST',
    path: '/v1/email/unsubscribe',
    tag: 'Suppressions',
    summary: 'Suppress an address (future sends skip it)',
    auth: 'apiKey',
    body: { schema: SuppressionRequestSchema, example: { email: 'jane@example.org' } },
    success: {
      status: 200,
      description: 'Suppressed',
      example: { success: true, message: 'jane@example.org unsubscribed' },
    },
    errors: [400],
  },
  {
    method: 'POST',
    path: '/v1/email/subscribe',
    tag: 'Suppressions',
    summary: 'Remove an address from the suppression list',
    auth: 'apiKey',
    body: { schema: SuppressionRequestSchema, example: { email: 'jane@example.org' } },
    success: {
      status: 200,
      description: 'Subscribed again',
      example: { success: true, message: 'jane@example.org subscribed' },
    },
    errors: [400],
  },
  {
    method: 'GET',
    path: '/v1/suppressions',
    tag: 'Suppressions',
    summary: 'List suppressed addresses, newest first (email: case-insensitive substring)',
    auth: 'apiKey',
    query: {
      schema: SuppressionsQuerySchema,
      example: { email: 'example.org', reason: 'hard_bounce', pageSize: '50' },
    },
    success: {
      status: 200,
      description: 'A page of suppressions',
      example: page([suppression]),
    },
    errors: [400],
  },
  {
    method: 'GET',
    path: '/v1/suppressions/:email',
    tag: 'Suppressions',
    summary: 'Get the suppression of one address (URL-encoded)',
    auth: 'apiKey',
    success: { status: 200, description: 'The suppression', example: { success: true, data: suppression } },
    errors: [400, 404],
  },
  {
    method: 'POST',
    path: '/v1/suppressions',
    tag: 'Suppressions',
    summary: 'Suppress 1 to 1000 addresses (reason defaults to manual)',
    auth: 'apiKey',
    body: {
      schema: AddSuppressionsSchema,
      example: { emails: ['jane@example.org', 'max@example.org'], reason: 'manual' },
    },
    success: {
      status: 200,
      description: 'How many were added and how many were already suppressed',
      example: { success: true, added: 1, existing: 1 },
    },
    errors: [400],
  },
  {
    method: 'DELETE',
    path: '/v1/suppressions/:email',
    tag: 'Suppressions',
    summary: 'Remove an address from the suppression list (it can be sent to again)',
    auth: 'apiKey',
    success: {
      status: 200,
      description: 'Removed',
      example: { success: true, message: 'jane@example.org removed from the suppression list' },
    },
    errors: [400, 404],
  },
  // Domains
  {
    method: 'POST',
    path: '/v1/domain/add',
    tag: 'Domains',
    summary: 'Add a sending domain (DKIM key generated, DNS records returned)',
    auth: 'apiKey',
    body: { schema: AddDomainSchema, example: { domain: 'example.com' } },
    success: {
      status: 201,
      description: 'Added',
      example: {
        success: true,
        message: 'Domain added; publish the DNS records, then verify the domain',
        data: domainData,
      },
    },
    errors: [400, 409],
  },
  {
    method: 'PUT',
    path: '/v1/domain/verify/:domain',
    tag: 'Domains',
    summary: 'Check the DNS records now',
    auth: 'apiKey',
    success: {
      status: 200,
      description: 'Checked',
      example: { success: true, message: 'Domain not verified: DKIM record check failed', data: domainData },
    },
    errors: [400, 404],
  },
  {
    method: 'GET',
    path: '/v1/domain/:domain',
    tag: 'Domains',
    summary: 'Get a domain and its records',
    auth: 'apiKey',
    success: { status: 200, description: 'The domain', example: { success: true, data: domainData } },
    errors: [400, 404],
  },
  {
    method: 'DELETE',
    path: '/v1/domain/:domain',
    tag: 'Domains',
    summary: 'Delete a domain and its mailer',
    auth: 'apiKey',
    success: { status: 200, description: 'Deleted', example: { success: true, message: 'Domain deleted' } },
    errors: [400, 404],
  },
  {
    method: 'GET',
    path: '/v1/domains',
    tag: 'Domains',
    summary: 'List domains',
    auth: 'apiKey',
    query: { schema: PageQuerySchema, example: { pageSize: '10' } },
    success: { status: 200, description: 'A page of domains', example: page([domainData]) },
    errors: [400],
  },
  // Domain report summaries: DMARC aggregate and TLS-RPT reports (docs/deliverability.md)
  {
    method: 'GET',
    path: '/v1/domain/:domain/dmarc',
    tag: 'Domains',
    summary:
      'DMARC aggregate reports of the domain summed: messages, aligned passes, sending sources (default: the last 30 days; reports whose period overlaps the range)',
    auth: 'apiKey',
    query: {
      schema: DeliverabilityReportsQuerySchema,
      example: { startDate: '2026-01-01', endDate: '2026-01-05' },
    },
    success: {
      status: 200,
      description: `The summary; at most ${DMARC_SOURCES_MAX} sources, largest first`,
      schema: DmarcSummaryResponseSchema,
      example: {
        success: true,
        data: {
          reports: 4,
          messages: 1250,
          dmarc_pass: 1190,
          dkim_aligned_pass: 1180,
          spf_aligned_pass: 1020,
          sources: [
            {
              source_ip: '192.0.2.10',
              count: 1180,
              disposition: 'none',
              dkim: 'pass',
              spf: 'pass',
              header_from: 'example.com',
              reporter: 'google.com',
            },
            {
              source_ip: '198.51.100.7',
              count: 60,
              disposition: 'quarantine',
              dkim: 'fail',
              spf: 'fail',
              header_from: 'example.com',
              reporter: 'Yahoo',
            },
          ],
        },
      } satisfies DmarcSummaryResponse,
    },
    errors: [400, 404],
  },
  {
    method: 'GET',
    path: '/v1/domain/:domain/tls-reports',
    tag: 'Domains',
    summary:
      'TLS-RPT reports of the domain per UTC day (the day a report starts): successful and failed sessions, failures by result type (default: the last 30 days)',
    auth: 'apiKey',
    query: {
      schema: DeliverabilityReportsQuerySchema,
      example: { startDate: '2026-01-01', endDate: '2026-01-02' },
    },
    success: {
      status: 200,
      description: 'Every UTC day of the range in order, zeros where no report started',
      schema: TlsReportsResponseSchema,
      example: {
        success: true,
        data: {
          reports: 2,
          days: [
            {
              date: '2026-01-01',
              reports: 2,
              successful: 4200,
              failed: 12,
              failure_types: { 'certificate-expired': 10, 'starttls-not-supported': 2 },
            },
            { date: '2026-01-02', reports: 0, successful: 0, failed: 0, failure_types: {} },
          ],
        },
      } satisfies TlsReportsResponse,
    },
    errors: [400, 404],
  },
  // Reputation and automatic pause (docs/deliverability.md)
  {
    method: 'GET',
    path: '/v1/domain/:domain/reputation',
    tag: 'Domains',
    summary:
      'Invalid-recipient bounce and complaint rates of a sending domain and its mailers, and any pause',
    auth: 'apiKey',
    success: { status: 200, description: 'The reputation', example: { success: true, data: reputationData } },
    errors: [400, 404],
  },
  {
    method: 'POST',
    path: '/v1/domain/:domain/resume',
    tag: 'Domains',
    summary: 'Resume sending from a paused domain (its current window is cleared)',
    auth: 'apiKey',
    success: {
      status: 200,
      description: 'Resumed (or was not paused)',
      example: { success: true, message: 'Sending resumed', data: reputationData },
    },
    errors: [400, 404],
  },
  // Mailers
  ...(
    [
      [
        '/v1/mailer/smtp',
        'Create an SMTP mailer (credentials not checked)',
        CreateSmtpMailerSchema,
        smtpCreate,
        'SMTP mailer created',
      ],
      [
        '/v1/smtpbasic/verify',
        'Create an SMTP mailer after logging in to the server',
        CreateSmtpMailerSchema,
        smtpCreate,
        'SMTP credentials verified; mailer created',
      ],
      [
        '/v1/mailer/imap',
        'Create an IMAP mailer (credentials not checked)',
        CreateImapMailerSchema,
        imapCreate,
        'IMAP mailer created',
      ],
      [
        '/v1/imapbasic/verify',
        'Create an IMAP mailer after logging in to the server',
        CreateImapMailerSchema,
        imapCreate,
        'IMAP credentials verified; mailer created',
      ],
    ] as const
  ).map(
    ([path, summary, schema, example, message]): Operation => ({
      method: 'POST',
      path,
      tag: 'Mailers',
      summary,
      auth: 'apiKey',
      body: { schema, example },
      success: {
        status: 201,
        description: 'Created',
        example: { success: true, mailer_id: MAILER, message },
      },
      errors: [400, 422],
    }),
  ),
  {
    method: 'POST',
    path: '/v1/mailer/sparkpost',
    tag: 'Mailers',
    summary:
      'Create a SparkPost mailer (API key sealed, not checked with SparkPost); answers the callback URL and credentials for SparkPost’s webhook, the password only here',
    auth: 'apiKey',
    body: {
      schema: CreateSparkPostMailerSchema,
      example: {
        name: 'SparkPost EU',
        email: 'news@example.com',
        config: { api_key: '5f1c0e7d2b9a', base_url: 'https://api.eu.sparkpost.com' },
      },
    },
    success: {
      status: 201,
      description: 'Created',
      example: {
        success: true,
        mailer_id: SPARKPOST_MAILER,
        message:
          'SparkPost mailer created; set up its webhook in SparkPost with the callback URL and credentials (the password is shown only now)',
        callback: { ...sparkPostCallback, password: 'spcb_Wv3q9xQJ0c1u6b2KxY8mN4sT7rE5aD1fG3hJ9kL0pZ2' },
      },
    },
    errors: [400, 422],
  },
  {
    method: 'PUT',
    path: '/v1/mailer/sparkpost',
    tag: 'Mailers',
    summary:
      'Update a SparkPost mailer (a base_url change needs api_key again; a new api_key re-activates it)',
    auth: 'apiKey',
    body: {
      schema: UpdateSparkPostMailerSchema,
      example: { mailer_id: SPARKPOST_MAILER, config: { api_key: '9a8b7c6d5e4f' } },
    },
    success: {
      status: 200,
      description: 'Updated',
      example: { success: true, mailer_id: SPARKPOST_MAILER, message: 'Mailer updated' },
    },
    errors: [400, 404, 422],
  },
  {
    method: 'PUT',
    path: '/v1/mailer/smtp',
    tag: 'Mailers',
    summary: 'Update an SMTP mailer',
    auth: 'apiKey',
    body: { schema: UpdateSmtpMailerSchema, example: { mailer_id: MAILER, name: 'Main relay' } },
    success: {
      status: 200,
      description: 'Updated',
      example: { success: true, mailer_id: MAILER, message: 'Mailer updated' },
    },
    errors: [400, 404, 422],
  },
  {
    method: 'PUT',
    path: '/v1/mailer/imap',
    tag: 'Mailers',
    summary:
      'Update an IMAP mailer (webhook: null removes its incoming webhook; a webhook.url on another scheme, host or port needs webhook.headers again)',
    auth: 'apiKey',
    body: {
      schema: UpdateImapMailerSchema,
      example: { mailer_id: 'basic_imap_01JD5K7ZQ3X0V8Y2N4M6P8R0TH', webhook: null },
    },
    success: {
      status: 200,
      description: 'Updated',
      example: {
        success: true,
        mailer_id: 'basic_imap_01JD5K7ZQ3X0V8Y2N4M6P8R0TH',
        message: 'Mailer updated',
      },
    },
    errors: [400, 404, 422],
  },
  {
    method: 'GET',
    path: '/v1/mailers',
    tag: 'Mailers',
    summary: 'List mailers',
    auth: 'apiKey',
    query: { schema: PageQuerySchema, example: { pageSize: '20' } },
    success: { status: 200, description: 'A page of mailers', example: page([mailerView]) },
    errors: [400],
  },
  {
    method: 'GET',
    path: '/v1/mailer/:mailer_id',
    tag: 'Mailers',
    summary:
      'Get a mailer (never its password or API key; a SparkPost mailer shows config {base_url, api_key_set} and callback {url, username})',
    auth: 'apiKey',
    success: { status: 200, description: 'The mailer', example: { success: true, data: mailerView } },
    errors: [404],
  },
  {
    method: 'DELETE',
    path: '/v1/mailer/:mailer_id',
    tag: 'Mailers',
    summary: 'Delete a mailer',
    auth: 'apiKey',
    success: { status: 200, description: 'Deleted', example: { success: true, message: 'Mailer deleted' } },
    errors: [404],
  },
  {
    method: 'POST',
    path: '/v1/mailer/:mailer_id/disable',
    tag: 'Mailers',
    summary: 'Disable a mailer',
    auth: 'apiKey',
    success: {
      status: 200,
      description: 'Disabled',
      example: { success: true, mailer_id: MAILER, state: 'disabled', message: 'Mailer disabled' },
    },
    errors: [404, 409],
  },
  {
    method: 'POST',
    path: '/v1/mailer/:mailer_id/enable',
    tag: 'Mailers',
    summary: 'Enable a mailer (a deactivated one is re-authenticated first)',
    auth: 'apiKey',
    success: {
      status: 200,
      description: 'Enabled',
      example: { success: true, mailer_id: MAILER, state: 'active', message: 'Mailer enabled' },
    },
    errors: [404, 409, 422],
  },
  // OAuth mailers (docs/oauth.md)
  {
    method: 'POST',
    path: '/v1/oauth/apps',
    tag: 'OAuth',
    summary: 'Register an OAuth app of the account (client secret sealed, never returned)',
    auth: 'apiKey',
    body: {
      schema: CreateOAuthAppSchema,
      example: {
        provider: 'microsoft',
        client_id: '00000000-0000-0000-0000-000000000001',
        client_secret: 'app-client-secret',
        redirect_uri: 'https://api.example.com/v1/oauth/callback',
        directory_tenant: 'common',
      },
    },
    success: { status: 201, description: 'Created', example: { success: true, app_id: OAUTH_APP } },
    errors: [400, 422],
  },
  {
    method: 'GET',
    path: '/v1/oauth/apps',
    tag: 'OAuth',
    summary: "The account's OAuth apps and the deployment's apps (no secrets)",
    auth: 'apiKey',
    success: {
      status: 200,
      description: 'Apps',
      example: {
        success: true,
        data: [
          {
            app_id: 'google',
            provider: 'google',
            client_id: '1234-abc.apps.googleusercontent.com',
            redirect_uri: 'https://api.example.com/v1/oauth/callback',
            directory_tenant: null,
            source: 'deployment',
            created_at: null,
          },
          {
            app_id: OAUTH_APP,
            provider: 'microsoft',
            client_id: '00000000-0000-0000-0000-000000000001',
            redirect_uri: 'https://api.example.com/v1/oauth/callback',
            directory_tenant: 'common',
            source: 'tenant',
            created_at: T,
          },
        ],
      },
    },
    errors: [],
  },
  {
    method: 'DELETE',
    path: '/v1/oauth/apps/:app_id',
    tag: 'OAuth',
    summary: 'Delete an OAuth app (refused while a mailer uses it)',
    auth: 'apiKey',
    success: {
      status: 200,
      description: 'Deleted',
      example: { success: true, message: 'OAuth app deleted' },
    },
    errors: [404, 409, 422],
  },
  {
    method: 'POST',
    path: '/v1/oauth/login',
    tag: 'OAuth',
    summary:
      'Connect an OAuth mailer: the consent URL (signed state, PKCE), or with `token` exchange a refresh token at once (201 created, 200 re-authenticated)',
    auth: 'apiKey',
    body: { schema: OAuthLoginSchema, example: { app_id: OAUTH_APP, type: 'smtp_imap' } },
    success: {
      status: 200,
      description: 'Consent URL (without token)',
      example: { success: true, url: 'https://accounts.google.com/o/oauth2/v2/auth?access_type=offline&...' },
    },
    errors: [400, 404, 409, 422, 503],
  },
  {
    method: 'GET',
    path: '/v1/oauth/callback',
    tag: 'OAuth',
    summary:
      "The provider's redirect (no API key: the signed state names the account); creates or re-authenticates the mailer (201 created, 200 re-authenticated)",
    auth: 'none',
    query: { schema: OAuthCallbackQuerySchema, example: { code: '4/0Ab...', state: 'eyJ2Ijox....sig' } },
    success: {
      status: 201,
      description: 'Mailer connected',
      example: {
        success: true,
        mailer_id: 'oauth_smtp_imap_01JD5K7ZQ3X0V8Y2N4M6P8R0TB',
        message: 'OAuth mailer connected for owner@example.com',
      },
    },
    errors: [400, 404, 409, 422, 500, 503],
  },
  {
    method: 'POST',
    path: '/v1/oauth/activate',
    tag: 'OAuth',
    summary:
      'Enable (`active`: true, default) or disable an OAuth mailer; a deactivated one is re-authenticated instead',
    auth: 'apiKey',
    body: {
      schema: OAuthActivateSchema,
      example: { mailer_id: 'oauth_smtp_01JD5K7ZQ3X0V8Y2N4M6P8R0TB', active: false },
    },
    success: {
      status: 200,
      description: 'State changed',
      example: {
        success: true,
        mailer_id: 'oauth_smtp_01JD5K7ZQ3X0V8Y2N4M6P8R0TB',
        state: 'disabled',
        message: 'Mailer disabled',
      },
    },
    errors: [400, 404, 409, 422],
  },
  // Webhooks
  {
    method: 'POST',
    path: '/v1/webhook/register',
    tag: 'Webhooks',
    summary: 'Register the EMAIL_EVENT or DOMAIN_VERIFICATION webhook',
    auth: 'apiKey',
    body: {
      schema: RegisterWebhookSchema,
      example: {
        webhook_url: 'https://hooks.example.com/mail',
        event: 'EMAIL_EVENT',
        method: 'POST',
        headers: { 'X-Auth': 'token' },
        webhook_options: emailEventsOn,
      },
    },
    success: {
      status: 201,
      description: 'Registered; the signing secret is shown this once',
      example: {
        success: true,
        message: 'Webhook registered',
        webhook_id: 'email_events_01JD5K7ZQ3X0V8Y2N4M6P8R0TE',
        signing_secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      },
    },
    errors: [400, 409, 422],
  },
  {
    method: 'PUT',
    path: '/v1/webhook/update',
    tag: 'Webhooks',
    summary: 'Update a webhook (a webhook_url on another scheme, host or port needs headers again)',
    auth: 'apiKey',
    body: { schema: UpdateWebhookSchema, example: { event: 'EMAIL_EVENT', active: false } },
    success: { status: 200, description: 'Updated', example: { success: true, message: 'Webhook updated' } },
    errors: [400, 404, 422],
  },
  {
    method: 'GET',
    path: '/v1/webhook',
    tag: 'Webhooks',
    summary: 'List the webhooks (header values never returned)',
    auth: 'apiKey',
    success: {
      status: 200,
      description: 'The webhooks',
      example: {
        success: true,
        webhooks: [
          {
            webhook_id: 'domain_01JD5K7ZQ3X0V8Y2N4M6P8R0TJ',
            event: 'DOMAIN_VERIFICATION',
            url: 'https://hooks.example.com/dns',
            method: 'POST',
            active: true,
            options: null,
            headers_present: [],
            created_at: T,
            updated_at: T,
          },
        ],
      },
    },
    errors: [],
  },
  {
    method: 'DELETE',
    path: '/v1/webhook/delete',
    tag: 'Webhooks',
    summary: 'Delete a webhook',
    auth: 'apiKey',
    body: { schema: WebhookEventBodySchema, example: { event: 'EMAIL_EVENT' } },
    success: { status: 200, description: 'Deleted', example: { success: true, message: 'Webhook deleted' } },
    errors: [400, 404],
  },
  {
    method: 'POST',
    path: '/v1/webhook/rotate-secret',
    tag: 'Webhooks',
    summary: 'Replace the signing secret (the old one stops at once)',
    auth: 'apiKey',
    body: { schema: WebhookEventBodySchema, example: { event: 'EMAIL_EVENT' } },
    success: {
      status: 200,
      description: 'Rotated',
      example: {
        success: true,
        message: 'Signing secret rotated',
        signing_secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      },
    },
    errors: [400, 404],
  },
  {
    method: 'GET',
    path: '/v1/webhook/deliveries',
    tag: 'Webhooks',
    summary: 'List webhook deliveries and their attempts',
    auth: 'apiKey',
    query: { schema: DeliveriesQuerySchema, example: { status: 'dropped', startDate: '2026-01-01' } },
    success: { status: 200, description: 'A page of deliveries', example: page([delivery]) },
    errors: [400],
  },
  {
    method: 'GET',
    path: '/v1/webhook/deliveries/:id',
    tag: 'Webhooks',
    summary: 'Get one delivery',
    auth: 'apiKey',
    success: { status: 200, description: 'The delivery', example: { success: true, data: delivery } },
    errors: [404],
  },
  {
    method: 'POST',
    path: '/v1/webhook/deliveries/:id/replay',
    tag: 'Webhooks',
    summary:
      'Send a delivery again (a new delivery sharing the stored body); at most WEBHOOK_REPLAY_LIMIT replays of a delivery per WEBHOOK_REPLAY_WINDOW_SECONDS (429 past it)',
    auth: 'apiKey',
    success: {
      status: 201,
      description: 'Queued',
      example: {
        success: true,
        message: 'Delivery queued for replay',
        delivery_id: 'whd_01JD5K7ZQ3X0V8Y2N4M6P8R0TK',
      },
    },
    errors: [404, 422],
  },
  // Inbound routing (docs/api/inbound.md, docs/inbound.md)
  {
    method: 'POST',
    path: '/v1/inbound/relay_webhook',
    tag: 'Inbound',
    summary: 'Route incoming mail of a verified domain to a webhook',
    auth: 'apiKey',
    body: {
      schema: RelayWebhookSchema,
      example: { domain: 'example.com', url: 'https://hooks.example.com/inbound', method: 'POST' },
    },
    success: {
      status: 200,
      description: 'Configured',
      example: { success: true, message: 'Incoming domain configured' },
    },
    errors: [400, 404, 409, 422],
  },
  {
    method: 'PUT',
    path: '/v1/inbound/update/:domain',
    tag: 'Inbound',
    summary:
      "Change an incoming domain's webhook or wildcard flag (a url on another scheme, host or port needs headers again)",
    auth: 'apiKey',
    body: { schema: UpdateInboundDomainSchema, example: { wildcard: true } },
    success: {
      status: 200,
      description: 'Updated',
      example: { success: true, message: 'Incoming domain updated' },
    },
    errors: [400, 404, 422],
  },
  {
    method: 'GET',
    path: '/v1/inbound/:domain',
    tag: 'Inbound',
    summary: 'Get an incoming domain',
    auth: 'apiKey',
    success: {
      status: 200,
      description: 'The domain (header values masked)',
      example: {
        domain: 'example.com',
        url: 'https://hooks.example.com/inbound',
        method: 'POST',
        headers: { 'X-Token': '********' },
        wildcard: false,
      } satisfies InboundDomainResponse,
    },
    errors: [404],
  },
  {
    method: 'POST',
    path: '/v1/inbound/username',
    tag: 'Inbound',
    summary: 'Add an incoming address (local part) to a domain',
    auth: 'apiKey',
    body: { schema: CreateInboundUsernameSchema, example: { user_name: 'support', domain: 'example.com' } },
    success: {
      status: 200,
      description: 'Added',
      example: { success: true, message: 'Incoming email address created' },
    },
    errors: [400, 404, 409],
  },
  {
    method: 'PUT',
    path: '/v1/inbound/username/update/:username',
    tag: 'Inbound',
    summary: 'Activate, deactivate or set strict replies on an incoming address',
    auth: 'apiKey',
    body: { schema: UpdateInboundUsernameSchema, example: { domain: 'example.com', strict_replies: true } },
    success: {
      status: 200,
      description: 'Updated',
      example: { success: true, message: 'Incoming email address updated' },
    },
    errors: [400, 404],
  },
  {
    method: 'GET',
    path: '/v1/inbound/username/:domain',
    tag: 'Inbound',
    summary: "List a domain's incoming addresses",
    auth: 'apiKey',
    success: {
      status: 200,
      description: 'The addresses',
      example: {
        success: true,
        emails: [{ username: 'support', active: true, strict_replies: false }],
      } satisfies InboundUsernamesResponse,
    },
    errors: [404],
  },
  // IMAP history backfill (docs/api/backfill.md, docs/backfill.md), with legacy aliases
  ...(['/v1/imap/:mailerID/history', '/v1/:mailerID/backfill'] as const).flatMap((base): Operation[] => [
    {
      method: 'POST',
      path: base,
      tag: 'Backfill',
      summary: 'Start a history backfill job',
      auth: 'apiKey',
      body: {
        schema: StartBackfillSchema,
        example: { window_start: '2025-06-01T00:00:00Z', count: 500, folders: { sent: true } },
      },
      success: {
        status: 200,
        description: 'Started',
        example: { success: true, jobId: '01JD5K7ZQ3X0V8Y2N4M6P8R0TP' } satisfies StartBackfillResponse,
      },
      errors: [400, 404, 409, 422],
    },
    {
      method: 'GET',
      path: `${base}/:jobId`,
      tag: 'Backfill',
      summary: 'Status of a backfill job',
      auth: 'apiKey',
      success: {
        status: 200,
        description: 'The job',
        example: {
          success: true,
          jobId: '01JD5K7ZQ3X0V8Y2N4M6P8R0TP',
          status: 'processing',
          processed: 120,
          target: 500,
          percent: 40,
          startedAt: T,
          endedAt: '',
        } satisfies BackfillStatusResponse,
      },
      errors: [404],
    },
    {
      method: 'POST',
      path: `${base}/:jobId/abort`,
      tag: 'Backfill',
      summary: 'Cancel a backfill job in flight',
      auth: 'apiKey',
      success: {
        status: 200,
        description: 'Cancelled',
        example: {
          success: true,
          jobId: '01JD5K7ZQ3X0V8Y2N4M6P8R0TP',
          status: 'cancelled',
        } satisfies AbortBackfillResponse,
      },
      errors: [404, 409],
    },
  ]),
  // Admin
  {
    method: 'POST',
    path: '/admin/v1/tenants',
    tag: 'Admin',
    summary: 'Create a tenant and its first API key',
    auth: 'admin',
    body: { schema: CreateTenantSchema, example: { name: 'Acme', tier: 'standard' } },
    success: {
      status: 201,
      description: 'Created; the API key is shown this once',
      example: {
        success: true,
        tenant_id: 'ten_01JD5K7ZQ3X0V8Y2N4M6P8R0TL',
        key_id: 'key_01JD5K7ZQ3X0V8Y2N4M6P8R0TM',
        api_key: 'myk_...',
      } satisfies CreateTenantResponse,
    },
    errors: [400],
  },
  {
    method: 'POST',
    path: '/admin/v1/tenants/:id/keys',
    tag: 'Admin',
    summary: 'Issue another API key for a tenant (scope full unless given)',
    auth: 'admin',
    body: { schema: AdminIssueKeySchema, example: { scope: 'send', name: 'billing app' } },
    success: {
      status: 201,
      description: 'Issued',
      example: {
        success: true,
        tenant_id: 'ten_01JD5K7ZQ3X0V8Y2N4M6P8R0TL',
        key_id: 'key_01JD5K7ZQ3X0V8Y2N4M6P8R0TN',
        api_key: 'myk_...',
      } satisfies CreateKeyResponse,
    },
    errors: [404],
  },
  {
    method: 'DELETE',
    path: '/admin/v1/keys/:keyId',
    tag: 'Admin',
    summary: 'Revoke an API key',
    auth: 'admin',
    success: { status: 200, description: 'Revoked', example: { success: true, message: 'API key revoked' } },
    errors: [404],
  },
  // API keys and the audit log (docs/api/keys.md, docs/api/audit.md)
  {
    method: 'POST',
    path: '/v1/keys',
    tag: 'Keys',
    summary: 'Create an API key (shown once); needs a full key',
    auth: 'apiKey',
    body: { schema: CreateApiKeySchema, example: { name: 'billing app', scope: 'send' } },
    success: {
      status: 201,
      description: 'Created',
      example: {
        success: true,
        key_id: 'key_01JD5K7ZQ3X0V8Y2N4M6P8R0TN',
        api_key: 'myk_Vb3q...',
      } satisfies CreateApiKeyResponse,
    },
    errors: [400, 409],
  },
  {
    method: 'GET',
    path: '/v1/keys',
    tag: 'Keys',
    summary: "List the tenant's API keys (never the keys themselves); needs a full key",
    auth: 'apiKey',
    success: {
      status: 200,
      description: 'The live keys, oldest first',
      example: {
        success: true,
        data: [
          {
            key_id: 'key_01JD5K7ZQ3X0V8Y2N4M6P8R0TN',
            name: 'billing app',
            scope: 'send',
            prefix: 'myk_Vb3qXz',
            created_at: T,
            last_used_at: null,
          },
        ],
      } satisfies ListApiKeysResponse,
    },
    errors: [],
  },
  {
    method: 'DELETE',
    path: '/v1/keys/:key_id',
    tag: 'Keys',
    summary: 'Revoke an API key (not the last full one); needs a full key',
    auth: 'apiKey',
    success: { status: 200, description: 'Revoked', example: { success: true, message: 'API key revoked' } },
    errors: [400, 404, 409],
  },
  {
    method: 'GET',
    path: '/v1/audit',
    tag: 'Audit',
    summary: 'The audit log: every change made through the API, newest first',
    auth: 'apiKey',
    query: {
      schema: AuditQuerySchema,
      example: { startDate: '2026-01-01', action: 'delete', pageSize: '50' },
    },
    success: {
      status: 200,
      description: 'A page of audit entries',
      example: {
        success: true,
        data: [
          {
            at: T,
            key_id: 'key_01JD5K7ZQ3X0V8Y2N4M6P8R0TN',
            action: 'delete',
            resource: 'template',
            resource_id: 'template_01JD5K7ZQ3X0V8Y2N4M6P8R0TG',
            ip: '203.0.113.7',
          },
        ],
        nextPageToken: null,
      } satisfies ListAuditResponse,
    },
    errors: [400],
  },
  // Operations and documentation
  ...(
    [
      ['/healthz', 'Liveness: the process is up', { status: 'ok' }],
      ['/readyz', 'Readiness: database, bus and kv answer', { status: 'ready' }],
      ['/openapi.json', 'This OpenAPI document', { openapi: '3.1.0' }],
      ['/docs', 'The API reference: Swagger UI over this document, with "Try it out"', '<!doctype html>...'],
      [
        '/ui',
        'The dashboard (docs/dashboard.md): a single-page app; sign in with an API key',
        '<!doctype html>...',
      ],
      ['/ui/:page', 'A dashboard page (the same app, e.g. /ui/messages)', '<!doctype html>...'],
      ['/ui/:page/:item', "A dashboard item's page (e.g. /ui/messages/{ref_id})", '<!doctype html>...'],
      [
        '/ui/assets/:name',
        'A content-hashed dashboard or /docs file (JavaScript, CSS), cached for a year',
        '...',
      ],
    ] as const
  ).map(
    ([path, summary, example]): Operation => ({
      method: 'GET',
      path,
      tag: 'Operations',
      summary,
      auth: 'none',
      success: { status: 200, description: 'OK', example },
      errors: [],
    }),
  ),
];
