import type {
  AUDIT_ACTIONS,
  AbortBackfillResponse,
  AddDomainSchema,
  AddSuppressionsResponse,
  AuditEntry,
  BackfillStatusResponse,
  CancelSendResponse,
  CreateApiKeyResponse,
  CreateApiKeySchema,
  CreateImapMailerSchema,
  CreateInboundUsernameSchema,
  CreateSmtpMailerSchema,
  CreateSparkPostMailerSchema,
  CreateTemplateResponse,
  CreateTemplateSchema,
  DmarcSummaryResponse,
  DomainReputationResponse,
  DomainResponse,
  EMAIL_LOG_STATUSES,
  EmailLogEntry,
  GetMailerResponse,
  GetSuppressionResponse,
  GetTemplateResponse,
  InboundDomainResponse,
  InboundUsernamesResponse,
  ListApiKeysResponse,
  ListAuditResponse,
  ListDeliveriesResponse,
  ListDomainsResponse,
  ListLogsResponse,
  ListMailersResponse,
  ListSuppressionsResponse,
  ListTemplatesResponse,
  ListWebhooksResponse,
  MailerCreatedResponse,
  MessageEventsResponse,
  RegisterWebhookResponse,
  RegisterWebhookSchema,
  RelayWebhookSchema,
  SendRequestInput,
  SendResponse,
  SparkPostMailerCreatedResponse,
  StartBackfillResponse,
  StartBackfillSchema,
  StatsGranularity,
  StatsResponse,
  SuppressionEntry,
  SuppressionReasonValue,
  SuppressionResponse,
  TlsReportsResponse,
  UpdateImapMailerSchema,
  UpdateInboundDomainSchema,
  UpdateInboundUsernameSchema,
  UpdateSmtpMailerSchema,
  UpdateSparkPostMailerSchema,
  UpdateTemplateSchema,
  UpdateWebhookSchema,
  WebhookDeliveryStatus,
  WebhookDeliveryView,
  WebhookEvent,
} from '@mailyard/contracts';
import type { z } from 'zod';
import { type EventStreamOptions, type StreamedEvent, streamEvents } from './events-stream';
import { type CallOptions, type HttpOptions, type RetryOptions, call } from './http';
import { paginate } from './paginate';
/**
 * The Mailyard API client: `new Mailyard({ apiKey, basePath })`, one typed method per endpoint
 * the gateway serves (grouped as docs/api/README.md groups them), request and response
 * types from @mailyard/contracts. Transport, retries and errors live in http.ts / errors.ts.
 */
import { randomUUID } from './random-uuid';

export interface MailyardOptions {
  apiKey: string;
  /** Gateway base URL, e.g. `https://mail.example.com` or `http://localhost:3000`. */
  basePath?: string;
  retry?: Partial<RetryOptions>;
  /** Per-attempt timeout (default 30 s). */
  timeoutMs?: number;
  /** A fetch implementation (default: the global fetch of Node 18+). */
  fetch?: typeof fetch;
}

export type CreateTemplateInput = z.input<typeof CreateTemplateSchema>;
export type UpdateTemplateInput = z.input<typeof UpdateTemplateSchema>;
export type AddDomainInput = z.input<typeof AddDomainSchema>;
export type CreateSmtpMailerInput = z.input<typeof CreateSmtpMailerSchema>;
export type CreateImapMailerInput = z.input<typeof CreateImapMailerSchema>;
export type UpdateSmtpMailerInput = z.input<typeof UpdateSmtpMailerSchema>;
export type UpdateImapMailerInput = z.input<typeof UpdateImapMailerSchema>;
export type CreateSparkPostMailerInput = z.input<typeof CreateSparkPostMailerSchema>;
export type UpdateSparkPostMailerInput = z.input<typeof UpdateSparkPostMailerSchema>;
export type RegisterWebhookInput = z.input<typeof RegisterWebhookSchema>;
export type UpdateWebhookInput = z.input<typeof UpdateWebhookSchema>;
export type RelayWebhookInput = z.input<typeof RelayWebhookSchema>;
export type UpdateInboundDomainInput = z.input<typeof UpdateInboundDomainSchema>;
export type CreateInboundUsernameInput = z.input<typeof CreateInboundUsernameSchema>;
export type UpdateInboundUsernameInput = z.input<typeof UpdateInboundUsernameSchema>;
export type StartBackfillInput = z.input<typeof StartBackfillSchema>;
export type CreateApiKeyInput = z.input<typeof CreateApiKeySchema>;

export interface PageParams {
  pageSize?: number;
  pageToken?: string;
}

/** GET /v1/email/logs filters (dates: RFC 3339 or YYYY-MM-DD). */
export interface LogsParams extends PageParams {
  email?: string;
  domain?: string;
  refId?: string;
  startDate?: string;
  endDate?: string;
  status?: (typeof EMAIL_LOG_STATUSES)[number];
  subject?: string;
  campaignId?: string;
  recipientType?: 'to' | 'cc' | 'bcc';
  deliveredStartDate?: string;
  deliveredEndDate?: string;
}

/** GET /v1/stats filters (dates: RFC 3339 or YYYY-MM-DD, a bare date is that whole UTC day). */
export interface StatsParams {
  startDate?: string;
  endDate?: string;
  granularity?: StatsGranularity;
  /** The sending domain (the From address's domain). */
  domain?: string;
  mailer_id?: string;
  campaignId?: string;
}

/**
 * GET /v1/domain/{domain}/dmarc and /tls-reports dates (RFC 3339 or YYYY-MM-DD, a bare date is
 * that whole UTC day); default: the last 30 days including today.
 */
export interface ReportRangeParams {
  startDate?: string;
  endDate?: string;
}

/** GET /v1/audit filters (dates: RFC 3339 or YYYY-MM-DD, a bare date is that whole UTC day). */
export interface AuditParams extends PageParams {
  startDate?: string;
  endDate?: string;
  action?: (typeof AUDIT_ACTIONS)[number];
}

/** GET /v1/suppressions filters: `email` is a case-insensitive substring of the address. */
export interface SuppressionsParams extends PageParams {
  email?: string;
  reason?: SuppressionReasonValue;
}

export interface DeliveriesParams extends PageParams {
  event?: string;
  status?: WebhookDeliveryStatus;
  startDate?: string;
  endDate?: string;
}

export interface SendOptions {
  /**
   * Makes the send safe to retry: the gateway answers a repeat with the first outcome. The
   * client generates one per call when omitted; pass `null` to send without (then a network
   * failure is not retried).
   */
  idempotencyKey?: string | null;
  /**
   * Schedules the send (the payload's `send_at`): a Date, or RFC 3339 text with an offset;
   * at most 7 days ahead, past means now. Cancel it with `emails.cancelSend(ref_id)` until then.
   */
  sendAt?: Date | string;
}

export interface SendResult extends SendResponse {
  /** True when the gateway replayed an earlier outcome for the same Idempotency-Key. */
  replayed: boolean;
  idempotencyKey: string | null;
}

export interface MessageResponse {
  success: true;
  message: string;
}
export interface MailerStateResponse extends MessageResponse {
  mailer_id: string;
  state: string;
}

const enc = encodeURIComponent;
type Query = Record<string, string | number | undefined>;

/** Transport settings shared by Mailyard and MailyardAdmin (admin.ts). */
export function httpOptions(who: string, key: string, options: Omit<MailyardOptions, 'apiKey'>): HttpOptions {
  const f = options.fetch ?? globalThis.fetch;
  if (!f) throw new TypeError(`${who}: no fetch available (Node 18+ or pass options.fetch)`);
  return {
    apiKey: key,
    basePath: options.basePath ?? 'http://localhost:3000',
    retry: { retries: 3, baseDelayMs: 200, maxDelayMs: 60_000, ...options.retry },
    timeoutMs: options.timeoutMs ?? 30_000,
    fetch: f.bind(globalThis),
    userAgent: 'mailyard-client-js/0.1.0',
  };
}

export class Mailyard {
  private readonly http: HttpOptions;

  constructor(options: MailyardOptions) {
    if (!options?.apiKey) throw new TypeError('Mailyard: apiKey is required');
    this.http = httpOptions('Mailyard', options.apiKey, options);
  }

  private async req<T>(c: CallOptions): Promise<T> {
    return (await call<T>(this.http, c)).body;
  }

  readonly emails = {
    /** POST /v1/email/send. Retried on network errors thanks to its Idempotency-Key. */
    send: async (payload: SendRequestInput, opts: SendOptions = {}): Promise<SendResult> => {
      const key = opts.idempotencyKey === undefined ? randomUUID() : opts.idempotencyKey;
      const sendAt = opts.sendAt instanceof Date ? opts.sendAt.toISOString() : opts.sendAt;
      const r = await call<SendResponse>(this.http, {
        method: 'POST',
        path: '/v1/email/send',
        body: sendAt === undefined ? payload : { ...payload, send_at: sendAt },
        headers: key ? { 'Idempotency-Key': key } : {},
        idempotent: key !== null,
      });
      return { ...r.body, replayed: r.headers.get('idempotent-replayed') === 'true', idempotencyKey: key };
    },
    /**
     * POST /v1/email/send/{ref_id}/cancel: cancels a scheduled send's copies not yet released.
     * 404 (MailyardError) for an unknown ref_id, 409 when nothing is left to cancel.
     */
    cancelSend: (refId: string) =>
      this.req<CancelSendResponse>({ method: 'POST', path: `/v1/email/send/${enc(refId)}/cancel` }),
  };

  readonly templates = {
    create: (input: CreateTemplateInput) =>
      this.req<CreateTemplateResponse>({ method: 'POST', path: '/v1/email/template', body: input }),
    get: (id: string) =>
      this.req<GetTemplateResponse>({ method: 'GET', path: `/v1/email/template/${enc(id)}` }),
    list: (params: PageParams = {}) =>
      this.req<ListTemplatesResponse>({ method: 'GET', path: '/v1/email/templates', query: { ...params } }),
    /** Every template, page after page. */
    listAll: (params: Omit<PageParams, 'pageToken'> = {}) =>
      paginate(async (pageToken) => {
        const p = await this.templates.list({ ...params, pageToken });
        return { items: p.templates, nextPageToken: p.next_page_token };
      }),
    update: (input: UpdateTemplateInput) =>
      this.req<{ success: true; template_id: string }>({
        method: 'PUT',
        path: '/v1/email/template',
        body: input,
      }),
    delete: (id: string) =>
      this.req<{ success: true }>({ method: 'DELETE', path: `/v1/email/template/${enc(id)}` }),
  };

  /** The tenant's API keys (docs/api/keys.md); every call needs a key of scope `full`. */
  readonly keys = {
    /** POST /v1/keys: the answer's `api_key` is shown this once. `scope` defaults to `full`. */
    create: (input: CreateApiKeyInput) =>
      this.req<CreateApiKeyResponse>({ method: 'POST', path: '/v1/keys', body: input }),
    list: () => this.req<ListApiKeysResponse>({ method: 'GET', path: '/v1/keys' }),
    /** DELETE /v1/keys/{keyId}: the key stops working; the last `full` key is a ConflictError. */
    delete: (keyId: string) =>
      this.req<MessageResponse>({ method: 'DELETE', path: `/v1/keys/${enc(keyId)}` }),
  };

  /** The audit log (docs/api/audit.md): every change made through the API, newest first. */
  readonly audit = {
    list: (params: AuditParams = {}) =>
      this.req<ListAuditResponse>({ method: 'GET', path: '/v1/audit', query: { ...params } as Query }),
    listAll: (params: Omit<AuditParams, 'pageToken'> = {}): AsyncGenerator<AuditEntry> =>
      paginate(async (pageToken) => {
        const p = await this.audit.list({ ...params, pageToken });
        return { items: p.data, nextPageToken: p.nextPageToken };
      }),
  };

  readonly logs = {
    list: (params: LogsParams = {}) =>
      this.req<ListLogsResponse>({ method: 'GET', path: '/v1/email/logs', query: { ...params } as Query }),
    listAll: (params: Omit<LogsParams, 'pageToken'> = {}): AsyncGenerator<EmailLogEntry> =>
      paginate(async (pageToken) => {
        const p = await this.logs.list({ ...params, pageToken });
        return { items: p.data, nextPageToken: p.nextPageToken };
      }),
    /** GET /v1/email/logs/{refId}/events: the send's events, oldest first (its timeline). */
    events: (refId: string) =>
      this.req<MessageEventsResponse>({ method: 'GET', path: `/v1/email/logs/${enc(refId)}/events` }),
  };

  readonly stats = {
    /** GET /v1/stats: counts per UTC day or hour, every bucket of the range, and their totals. */
    get: (params: StatsParams = {}) =>
      this.req<StatsResponse>({ method: 'GET', path: '/v1/stats', query: { ...params } as Query }),
  };

  /** The suppression list (docs/api/suppressions.md); `email` arguments are sent URL-encoded. */
  readonly suppressions = {
    /** GET /v1/suppressions: one page, newest first. */
    list: (params: SuppressionsParams = {}) =>
      this.req<ListSuppressionsResponse>({
        method: 'GET',
        path: '/v1/suppressions',
        query: { ...params } as Query,
      }),
    /** Every matching suppression, page after page. */
    listAll: (params: Omit<SuppressionsParams, 'pageToken'> = {}): AsyncGenerator<SuppressionEntry> =>
      paginate(async (pageToken) => {
        const p = await this.suppressions.list({ ...params, pageToken });
        return { items: p.data, nextPageToken: p.nextPageToken };
      }),
    /** GET /v1/suppressions/{email}: a NotFoundError when the address is not suppressed. */
    get: (email: string) =>
      this.req<GetSuppressionResponse>({ method: 'GET', path: `/v1/suppressions/${enc(email)}` }),
    /** POST /v1/suppressions: 1 to 1000 addresses; reason defaults to `manual`. Safe to retry. */
    add: (emails: string[], reason?: SuppressionReasonValue) =>
      this.req<AddSuppressionsResponse>({
        method: 'POST',
        path: '/v1/suppressions',
        body: { emails, ...(reason ? { reason } : {}) },
        idempotent: true,
      }),
    /** DELETE /v1/suppressions/{email}: the address can be sent to again; NotFoundError when it was not suppressed. */
    remove: (email: string) =>
      this.req<MessageResponse>({ method: 'DELETE', path: `/v1/suppressions/${enc(email)}` }),
    unsubscribe: (email: string) =>
      this.req<SuppressionResponse>({ method: 'POST', path: '/v1/email/unsubscribe', body: { email } }),
    subscribe: (email: string) =>
      this.req<SuppressionResponse>({ method: 'POST', path: '/v1/email/subscribe', body: { email } }),
  };

  readonly domains = {
    add: (input: AddDomainInput) =>
      this.req<DomainResponse>({ method: 'POST', path: '/v1/domain/add', body: input }),
    verify: (domain: string) =>
      this.req<DomainResponse>({ method: 'PUT', path: `/v1/domain/verify/${enc(domain)}`, idempotent: true }),
    get: (domain: string) => this.req<DomainResponse>({ method: 'GET', path: `/v1/domain/${enc(domain)}` }),
    delete: (domain: string) =>
      this.req<MessageResponse>({ method: 'DELETE', path: `/v1/domain/${enc(domain)}` }),
    list: (params: PageParams = {}) =>
      this.req<ListDomainsResponse>({ method: 'GET', path: '/v1/domains', query: { ...params } }),
    listAll: (params: Omit<PageParams, 'pageToken'> = {}) =>
      paginate(async (pageToken) => {
        const p = await this.domains.list({ ...params, pageToken });
        return { items: p.data, nextPageToken: p.nextPageToken };
      }),
    /** GET /v1/domain/{domain}/dmarc: the DMARC aggregate reports summed (messages, aligned passes, sources). */
    dmarc: (domain: string, params: ReportRangeParams = {}) =>
      this.req<DmarcSummaryResponse>({
        method: 'GET',
        path: `/v1/domain/${enc(domain)}/dmarc`,
        query: { ...params },
      }),
    /** GET /v1/domain/{domain}/tls-reports: TLS-RPT sessions per UTC day, failures by result type. */
    tlsReports: (domain: string, params: ReportRangeParams = {}) =>
      this.req<TlsReportsResponse>({
        method: 'GET',
        path: `/v1/domain/${enc(domain)}/tls-reports`,
        query: { ...params },
      }),
  };

  /** Sender reputation and automatic pause (docs/deliverability.md "Reputation and automatic pause"). */
  readonly reputation = {
    /** GET /v1/domain/{domain}/reputation: rates over the last REPUTATION_WINDOW copies, thresholds, pauses. */
    get: (domain: string) =>
      this.req<DomainReputationResponse>({ method: 'GET', path: `/v1/domain/${enc(domain)}/reputation` }),
    /** POST /v1/domain/{domain}/resume: ends the domain's pause (a mailer's: mailers.enable). */
    resume: (domain: string) =>
      this.req<DomainReputationResponse>({
        method: 'POST',
        path: `/v1/domain/${enc(domain)}/resume`,
        idempotent: true,
      }),
  };

  readonly mailers = {
    /** POST /v1/mailer/smtp: saved without checking the credentials. */
    createSmtp: (input: CreateSmtpMailerInput) =>
      this.req<MailerCreatedResponse>({ method: 'POST', path: '/v1/mailer/smtp', body: input }),
    /** POST /v1/smtpbasic/verify: logs in to the SMTP server first, saves only on success. */
    verifySmtp: (input: CreateSmtpMailerInput) =>
      this.req<MailerCreatedResponse>({ method: 'POST', path: '/v1/smtpbasic/verify', body: input }),
    createImap: (input: CreateImapMailerInput) =>
      this.req<MailerCreatedResponse>({ method: 'POST', path: '/v1/mailer/imap', body: input }),
    verifyImap: (input: CreateImapMailerInput) =>
      this.req<MailerCreatedResponse>({ method: 'POST', path: '/v1/imapbasic/verify', body: input }),
    updateSmtp: (input: UpdateSmtpMailerInput) =>
      this.req<MailerCreatedResponse>({ method: 'PUT', path: '/v1/mailer/smtp', body: input }),
    updateImap: (input: UpdateImapMailerInput) =>
      this.req<MailerCreatedResponse>({ method: 'PUT', path: '/v1/mailer/imap', body: input }),
    /** POST /v1/mailer/sparkpost: the answer's `callback.password` is shown only here; keep it. */
    createSparkPost: (input: CreateSparkPostMailerInput) =>
      this.req<SparkPostMailerCreatedResponse>({ method: 'POST', path: '/v1/mailer/sparkpost', body: input }),
    /** PUT /v1/mailer/sparkpost: a base_url change needs api_key again; a new api_key re-activates. */
    updateSparkPost: (input: UpdateSparkPostMailerInput) =>
      this.req<MailerCreatedResponse>({ method: 'PUT', path: '/v1/mailer/sparkpost', body: input }),
    get: (mailerId: string) =>
      this.req<GetMailerResponse>({ method: 'GET', path: `/v1/mailer/${enc(mailerId)}` }),
    delete: (mailerId: string) =>
      this.req<MessageResponse>({ method: 'DELETE', path: `/v1/mailer/${enc(mailerId)}` }),
    disable: (mailerId: string) =>
      this.req<MailerStateResponse>({ method: 'POST', path: `/v1/mailer/${enc(mailerId)}/disable` }),
    enable: (mailerId: string) =>
      this.req<MailerStateResponse>({ method: 'POST', path: `/v1/mailer/${enc(mailerId)}/enable` }),
    list: (params: PageParams = {}) =>
      this.req<ListMailersResponse>({ method: 'GET', path: '/v1/mailers', query: { ...params } }),
    listAll: (params: Omit<PageParams, 'pageToken'> = {}) =>
      paginate(async (pageToken) => {
        const p = await this.mailers.list({ ...params, pageToken });
        return { items: p.data, nextPageToken: p.nextPageToken };
      }),
  };

  readonly webhooks = {
    /** The answer holds the signing secret (`whsec_...`), shown this once. */
    register: (input: RegisterWebhookInput) =>
      this.req<RegisterWebhookResponse>({ method: 'POST', path: '/v1/webhook/register', body: input }),
    update: (input: UpdateWebhookInput) =>
      this.req<MessageResponse>({ method: 'PUT', path: '/v1/webhook/update', body: input }),
    list: () => this.req<ListWebhooksResponse>({ method: 'GET', path: '/v1/webhook' }),
    delete: (event: WebhookEvent) =>
      this.req<MessageResponse>({ method: 'DELETE', path: '/v1/webhook/delete', body: { event } }),
    rotateSecret: (event: WebhookEvent) =>
      this.req<MessageResponse & { signing_secret: string }>({
        method: 'POST',
        path: '/v1/webhook/rotate-secret',
        body: { event },
      }),
    deliveries: {
      list: (params: DeliveriesParams = {}) =>
        this.req<ListDeliveriesResponse>({
          method: 'GET',
          path: '/v1/webhook/deliveries',
          query: { ...params } as Query,
        }),
      listAll: (params: Omit<DeliveriesParams, 'pageToken'> = {}): AsyncGenerator<WebhookDeliveryView> =>
        paginate(async (pageToken) => {
          const p = await this.webhooks.deliveries.list({ ...params, pageToken });
          return { items: p.data, nextPageToken: p.nextPageToken };
        }),
      get: (deliveryId: string) =>
        this.req<{ success: true; data: WebhookDeliveryView }>({
          method: 'GET',
          path: `/v1/webhook/deliveries/${enc(deliveryId)}`,
        }),
      replay: (deliveryId: string) =>
        this.req<MessageResponse & { delivery_id: string }>({
          method: 'POST',
          path: `/v1/webhook/deliveries/${enc(deliveryId)}/replay`,
        }),
    },
  };
  /** Inbound routing (docs/inbound.md): where a verified domain's incoming mail is posted, which addresses accept mail. */
  readonly inbound = {
    /** POST /v1/inbound/relay_webhook: the domain must be a verified sending domain of the account. */
    relayWebhook: (input: RelayWebhookInput) =>
      this.req<MessageResponse>({ method: 'POST', path: '/v1/inbound/relay_webhook', body: input }),
    /** PUT /v1/inbound/update/{domain}: at least one of url, method, headers, wildcard. */
    update: (domain: string, input: UpdateInboundDomainInput) =>
      this.req<MessageResponse>({ method: 'PUT', path: `/v1/inbound/update/${enc(domain)}`, body: input }),
    /** GET /v1/inbound/{domain}: header values come back masked. */
    get: (domain: string) =>
      this.req<InboundDomainResponse>({ method: 'GET', path: `/v1/inbound/${enc(domain)}` }),
    usernames: {
      /** POST /v1/inbound/username: `user_name` is the local part, stored lowercase. */
      create: (input: CreateInboundUsernameInput) =>
        this.req<MessageResponse>({ method: 'POST', path: '/v1/inbound/username', body: input }),
      /** PUT /v1/inbound/username/update/{address}: `address` is the full `local@domain`. */
      update: (address: string, input: UpdateInboundUsernameInput) =>
        this.req<MessageResponse>({
          method: 'PUT',
          path: `/v1/inbound/username/update/${enc(address)}`,
          body: input,
        }),
      list: (domain: string) =>
        this.req<InboundUsernamesResponse>({ method: 'GET', path: `/v1/inbound/username/${enc(domain)}` }),
    },
  };

  /**
   * IMAP history backfill of an IMAP-capable mailer (docs/backfill.md). A start while a job is
   * active throws a ConflictError whose `envelope.jobId` is the active job.
   */
  readonly backfill = {
    /** POST /v1/imap/{mailerId}/history. */
    start: (mailerId: string, input: StartBackfillInput) =>
      this.req<StartBackfillResponse>({
        method: 'POST',
        path: `/v1/imap/${enc(mailerId)}/history`,
        body: input,
      }),
    /** GET /v1/imap/{mailerId}/history/{jobId}. */
    status: (mailerId: string, jobId: string) =>
      this.req<BackfillStatusResponse>({
        method: 'GET',
        path: `/v1/imap/${enc(mailerId)}/history/${enc(jobId)}`,
      }),
    /** POST /v1/imap/{mailerId}/history/{jobId}/abort; a finished job is a ConflictError. */
    abort: (mailerId: string, jobId: string) =>
      this.req<AbortBackfillResponse>({
        method: 'POST',
        path: `/v1/imap/${enc(mailerId)}/history/${enc(jobId)}/abort`,
      }),
  };

  /** The live event stream (docs/client.md "Live events"). */
  readonly events = {
    /**
     * GET /v1/events/stream: the account's email events as they are recorded, as an async
     * iterator (`for await (const { id, event } of client.events.stream({ signal }))`). One
     * connection, no retries: reconnect with `lastEventId` set to the last id seen.
     */
    stream: (options: EventStreamOptions = {}): AsyncGenerator<StreamedEvent> =>
      streamEvents(this.http, options),
  };
}
