import {
  type EmailEvent,
  type EmailEventType,
  SUCCESS_EMAIL_EVENTS,
  WEBHOOK_EVENT_TOGGLES,
  type WebhookEventToggles,
  emptyTracking,
} from '@mailyard/contracts';
import { type AccountWebhooks, type DispatchEvent, routeEvents } from './route-event';

const toggles = (on: Partial<WebhookEventToggles>): WebhookEventToggles =>
  ({ ...Object.fromEntries(WEBHOOK_EVENT_TOGGLES.map((t) => [t, false])), ...on }) as WebhookEventToggles;

const email = (event: EmailEventType, at: string, traceparent?: string): DispatchEvent => {
  const e: EmailEvent = {
    event,
    success: SUCCESS_EMAIL_EVENTS.includes(event),
    details: {
      ref_id: '01J0000000000000000000000A',
      mailer_id: 'domain_x',
      email: ['a@example.com'],
      custom_args: null,
      message_id: '',
      thread_id: '',
      webhook_id: '',
      event_at: at,
      tracking: emptyTracking(),
      failed_reason: '',
    },
  };
  return { kind: 'email', event: e, occurredAt: at, ...(traceparent ? { traceparent } : {}) };
};

const deactivated = (
  configType: 'basic_smtp' | 'basic_imap' | 'smtp_imap',
  mailerId: string,
  at: string,
): DispatchEvent => ({
  kind: 'mailer',
  occurredAt: at,
  event: {
    event: 'MAILER_DEACTIVATED',
    success: false,
    details: { mailer_id: mailerId, config_type: configType, failed_reason: 'provider_auth_error' },
  },
});

const domain = (at: string): DispatchEvent => ({
  kind: 'domain',
  occurredAt: at,
  event: {
    event: 'DOMAIN_VERIFICATION',
    details: {
      domain: 'example.com',
      verified: true,
      mailer_id: 'domain_x',
      custom_args: {},
      webhook_id: '',
    },
  },
});

const hooks = (over: Partial<AccountWebhooks> = {}): AccountWebhooks => ({
  emailEvent: { id: 'email_events_1', active: true, events: toggles({ delivery: true, bounce: true }) },
  domainVerification: { id: 'domain_1', active: true, events: null },
  mailerWebhooks: new Set(['basic_imap_1']),
  ...over,
});

describe('routeEvents', () => {
  it('batches subscribed email events into one array, oldest first, with webhook_id', () => {
    const out = routeEvents(
      [
        email('MAIL_BOUNCE', '2026-01-01T00:00:02.000Z', 'tp-b'),
        email('MAIL_DELIVERED', '2026-01-01T00:00:01.000Z', 'tp-a'),
        email('MAIL_DELIVERED', '2026-01-01T00:00:01.000500Z'),
      ],
      hooks(),
    );
    expect(out).toHaveLength(1);
    const [d] = out;
    expect(d!.targetKind).toBe('webhook');
    expect(d!.webhookId).toBe('email_events_1');
    const body = d!.body as EmailEvent[];
    expect(body.map((e) => e.details.event_at)).toEqual([
      '2026-01-01T00:00:01.000Z',
      '2026-01-01T00:00:01.000500Z',
      '2026-01-01T00:00:02.000Z',
    ]);
    expect(body.every((e) => e.details.webhook_id === 'email_events_1')).toBe(true);
    expect(d!.eventTypes.sort()).toEqual(['MAIL_BOUNCE', 'MAIL_DELIVERED']);
    expect(d!.traceparent).toBe('tp-a');
  });

  it('splits a batch larger than maxPerBody into bodies of at most that many, oldest first', () => {
    const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();
    const events = [5, 1, 4, 2, 3].map((n) => email('MAIL_DELIVERED', at(n), `tp-${n}`));
    const out = routeEvents([...events, email('MAIL_OPENED', at(0))], hooks(), 2);
    expect(out.map((d) => (d.body as EmailEvent[]).map((e) => e.details.event_at))).toEqual([
      [at(1), at(2)],
      [at(3), at(4)],
      [at(5)],
    ]);
    expect(out.map((d) => d.traceparent)).toEqual(['tp-1', 'tp-3', 'tp-5']);
  });

  it('a single email event is still an array', () => {
    const out = routeEvents([email('MAIL_DELIVERED', '2026-01-01T00:00:01.000Z')], hooks());
    expect(Array.isArray(out[0]!.body)).toBe(true);
  });

  it('drops email events whose toggle is off; imap_error never applies', () => {
    const h = hooks({
      emailEvent: {
        id: 'email_events_1',
        active: true,
        events: toggles({ delivery: true, imap_error: true }),
      },
    });
    const out = routeEvents(
      [email('SMTP_ERROR', '2026-01-01T00:00:01.000Z'), email('MAIL_OPENED', '2026-01-01T00:00:02.000Z')],
      h,
    );
    expect(out).toEqual([]);
  });

  it('phishing is delivered only with its own toggle', () => {
    const on = hooks({
      emailEvent: { id: 'e', active: true, events: toggles({ delivery: true, phishing: true }) },
    });
    expect(routeEvents([email('PHISHING', '2026-01-01T00:00:01.000Z')], on)).toHaveLength(1);
    expect(routeEvents([email('PHISHING', '2026-01-01T00:00:01.000Z')], hooks())).toHaveLength(0);
  });

  it('delivers nothing to an inactive or missing webhook', () => {
    const events = [email('MAIL_DELIVERED', '2026-01-01T00:00:01.000Z'), domain('2026-01-01T00:00:01.000Z')];
    expect(
      routeEvents(
        events,
        hooks({
          emailEvent: { id: 'e', active: false, events: toggles({ delivery: true }) },
          domainVerification: { id: 'd', active: false, events: null },
        }),
      ),
    ).toEqual([]);
    expect(routeEvents(events, hooks({ emailEvent: null, domainVerification: null }))).toEqual([]);
  });

  it('MAILER_DEACTIVATED of an SMTP-only config is its own one-element array, bypassing the toggles, without webhook_id', () => {
    const out = routeEvents(
      [
        deactivated('basic_smtp', 'basic_smtp_1', '2026-01-01T00:00:03.000Z'),
        email('MAIL_DELIVERED', '2026-01-01T00:00:01.000Z'),
      ],
      hooks({ emailEvent: { id: 'e', active: true, events: toggles({ delivery: true }) } }),
    );
    expect(out).toHaveLength(2);
    const bodies = out.map((d) => d.body as Array<{ event: string; details: Record<string, unknown> }>);
    expect(bodies.map((b) => b.map((e) => e.event))).toEqual([['MAIL_DELIVERED'], ['MAILER_DEACTIVATED']]);
    expect(out.every((d) => d.webhookId === 'e')).toBe(true);
    expect(bodies[1]![0]!.details).not.toHaveProperty('webhook_id');
    // Alone it is a one-element array, whatever the toggles say.
    const alone = routeEvents(
      [deactivated('basic_smtp', 'basic_smtp_1', '2026-01-01T00:00:03.000Z')],
      hooks({ emailEvent: { id: 'e', active: true, events: toggles({ open: true }) } }),
    );
    expect(alone[0]!.body).toEqual([expect.objectContaining({ event: 'MAILER_DEACTIVATED' })]);
  });

  it('MAILER_DEACTIVATED of an IMAP-capable config goes alone to the mailer webhook as an object', () => {
    const out = routeEvents(
      [
        deactivated('basic_imap', 'basic_imap_1', '2026-01-01T00:00:03.000Z'),
        deactivated('smtp_imap', 'oauth_smtp_imap_2', '2026-01-01T00:00:03.000Z'),
      ],
      hooks(),
    );
    expect(out[0]).toMatchObject({
      targetKind: 'mailer',
      webhookId: 'basic_imap_1',
      eventTypes: ['MAILER_DEACTIVATED'],
    });
    expect(Array.isArray(out[0]!.body)).toBe(false);
    // The other one has no webhook of its own: the EMAIL_EVENT fallback (next test).
    expect(out.slice(1).map((d) => [d.targetKind, d.webhookId])).toEqual([['webhook', 'email_events_1']]);
  });

  it('MAILER_DEACTIVATED of an IMAP-capable config without its own webhook falls back to EMAIL_EVENT as a one-element array', () => {
    const event = deactivated('smtp_imap', 'oauth_smtp_imap_2', '2026-01-01T00:00:03.000Z');
    // Whatever the toggles say, like the SMTP-only routing.
    const out = routeEvents(
      [event],
      hooks({ emailEvent: { id: 'e', active: true, events: toggles({ open: true }) } }),
    );
    expect(out).toEqual([
      {
        targetKind: 'webhook',
        webhookId: 'e',
        eventTypes: ['MAILER_DEACTIVATED'],
        body: [(event as { event: unknown }).event],
      },
    ]);
    // No EMAIL_EVENT webhook (or an inactive one) either: nobody to tell.
    expect(routeEvents([event], hooks({ emailEvent: null }))).toEqual([]);
    expect(
      routeEvents(
        [event],
        hooks({ emailEvent: { id: 'e', active: false, events: toggles({ open: true }) } }),
      ),
    ).toEqual([]);
    // With its own webhook it never reaches EMAIL_EVENT too.
    const own = routeEvents([deactivated('basic_imap', 'basic_imap_1', '2026-01-01T00:00:03.000Z')], hooks());
    expect(own.map((d) => d.targetKind)).toEqual(['mailer']);
  });

  it('SENDING_PAUSED goes alone, as a one-element array, to the EMAIL_EVENT webhook, toggles bypassed', () => {
    const paused: DispatchEvent = {
      kind: 'paused',
      occurredAt: '2026-01-01T00:00:04.000Z',
      traceparent: 'tp-p',
      event: {
        event: 'SENDING_PAUSED',
        success: false,
        details: {
          scope: 'domain',
          domain: 'example.com',
          metric: 'invalid_recipient_bounce_rate',
          rate: 0.062,
          window: 1000,
          threshold: 0.05,
          paused_at: '2026-01-01T00:00:04.000Z',
        },
      },
    };
    const out = routeEvents(
      [email('MAIL_DELIVERED', '2026-01-01T00:00:01.000Z'), paused],
      hooks({ emailEvent: { id: 'e', active: true, events: toggles({ delivery: true }) } }),
    );
    expect(out).toHaveLength(2);
    expect(out[1]).toEqual({
      targetKind: 'webhook',
      webhookId: 'e',
      eventTypes: ['SENDING_PAUSED'],
      body: [(paused as { event: unknown }).event],
      traceparent: 'tp-p',
    });
    expect(routeEvents([paused], hooks({ emailEvent: null }))).toEqual([]);
    expect(routeEvents([paused], hooks({ emailEvent: { id: 'e', active: false, events: null } }))).toEqual(
      [],
    );
  });

  it('DOMAIN_VERIFICATION is a single object with the webhook id', () => {
    const out = routeEvents(
      [domain('2026-01-01T00:00:01.000Z'), domain('2026-01-01T00:00:02.000Z')],
      hooks(),
    );
    expect(out).toHaveLength(2);
    for (const d of out) {
      expect(d.webhookId).toBe('domain_1');
      expect(d.body).toMatchObject({ event: 'DOMAIN_VERIFICATION', details: { webhook_id: 'domain_1' } });
    }
  });
});

describe('mailer webhook bodies (MAILER_WEBHOOK)', () => {
  const hooks: AccountWebhooks = {
    emailEvent: null,
    domainVerification: null,
    mailerWebhooks: new Set(['basic_imap_a']),
  };
  const object = (mailerId: string, headers?: Record<string, string>): DispatchEvent => ({
    kind: 'mailer-object',
    occurredAt: '2026-01-01T00:00:00.000Z',
    message: {
      mailer_id: mailerId,
      event: 'INCOMING_EMAIL',
      body: { event: 'INCOMING_EMAIL' },
      ...(headers ? { headers } : {}),
    },
  });

  it('go alone to the mailer webhook with their extra headers; none without a webhook', () => {
    const out = routeEvents(
      [
        object('basic_imap_a', { 'X-History-Backfill-Job-Id': 'J1' }),
        object('basic_imap_b'),
        object('basic_imap_a'),
      ],
      hooks,
    );
    expect(out).toEqual([
      {
        targetKind: 'mailer',
        webhookId: 'basic_imap_a',
        eventTypes: ['INCOMING_EMAIL'],
        body: { event: 'INCOMING_EMAIL' },
        extraHeaders: { 'X-History-Backfill-Job-Id': 'J1' },
      },
      {
        targetKind: 'mailer',
        webhookId: 'basic_imap_a',
        eventTypes: ['INCOMING_EMAIL'],
        body: { event: 'INCOMING_EMAIL' },
      },
    ]);
  });
});
