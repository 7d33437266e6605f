import { BusMessages, Exchange, emptyTracking } from '@mailyard/contracts';
import { OutboxPayloadError, outboxMessage } from './outbox';

describe('outboxMessage', () => {
  it('builds the envelope, exchange and routing key from the message definition', () => {
    const row = outboxMessage(
      BusMessages.sendEmail,
      { sends: [{ tenant_id: 't', ref_id: 'R', copy_ids: ['R.1'] }], attempt: 1 },
      { tenantId: 't' },
    );
    expect(row).toMatchObject({
      exchange: Exchange.commands,
      routingKey: 'send.email',
      envelope: {
        type: 'send.email',
        version: 2,
        tenant_id: 't',
        payload: { sends: [{ copy_ids: ['R.1'] }] },
      },
    });
    const event = outboxMessage(BusMessages.emailEvent, {
      event: 'MAIL_OPENED',
      success: true,
      details: {
        ref_id: 'R',
        mailer_id: 'm',
        email: ['a@b.test'],
        custom_args: null,
        message_id: '',
        thread_id: '',
        webhook_id: '',
        event_at: '2026-01-01T00:00:00.000001Z',
        tracking: emptyTracking(),
        failed_reason: '',
      },
    });
    expect([event.exchange, event.routingKey, event.envelope.type]).toEqual([
      Exchange.events,
      'email.mail_opened',
      'email.event',
    ]);
  });

  it('refuses a payload that does not match its schema', () => {
    expect(() =>
      outboxMessage(BusMessages.sendEmail, {
        sends: [{ tenant_id: 't', ref_id: 'R', copy_ids: ['R.1'] }],
        attempt: 0,
      }),
    ).toThrow(OutboxPayloadError);
    // An SMTP_ERROR without its attempt metadata (docs/architecture.md, reliability 2) is refused too.
    expect(() =>
      outboxMessage(BusMessages.emailEvent, {
        event: 'SMTP_ERROR',
        success: false,
        details: {
          ref_id: 'R',
          mailer_id: 'm',
          email: ['a@b.test'],
          custom_args: null,
          message_id: '',
          thread_id: '',
          webhook_id: '',
          event_at: '2026-01-01T00:00:00Z',
          tracking: emptyTracking(),
          failed_reason: 'x',
        },
      }),
    ).toThrow(/attempt is required on SMTP_ERROR/);
  });
});

describe('outboxMessage with email events', () => {
  const event = (over: Record<string, unknown> = {}) => ({
    event: 'MAIL_DELIVERED' as const,
    success: true,
    details: {
      ref_id: 'R',
      mailer_id: 'm',
      email: ['a@b.test'],
      custom_args: { campaign: 'c' },
      message_id: '<m@x>',
      thread_id: '',
      webhook_id: '',
      event_at: '2026-01-01T00:00:00.000001Z',
      tracking: emptyTracking(),
      failed_reason: '',
      ...over,
    },
  });
  afterEach(() => jest.restoreAllMocks());

  it("refuses an invalid event or group in its schema's own words", () => {
    const one = jest.spyOn(BusMessages.emailEvent.schema, 'safeParse');
    expect(() => outboxMessage(BusMessages.emailEvent, event({ event_at: 'yesterday' }))).toThrow(
      /details\.event_at: must be an RFC 3339 UTC timestamp/,
    );
    expect(() =>
      outboxMessage(BusMessages.emailEvent, { ...event(), success: false } as unknown as ReturnType<
        typeof event
      >),
    ).toThrow(/success must be true for MAIL_DELIVERED/);
    expect(one).toHaveBeenCalledTimes(2);
    const mixed = { events: [{ event: event() }, { event: { ...event(), event: 'MAIL_OPENED' as const } }] };
    expect(() =>
      outboxMessage(
        BusMessages.emailEventGroup,
        mixed as unknown as { events: Array<{ event: ReturnType<typeof event> }> },
      ),
    ).toThrow(/every event of a group must be MAIL_DELIVERED/);
  });
});
