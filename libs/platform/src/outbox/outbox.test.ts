import { BusMessages, Exchange, emptyTracking } from '@mailyard/contracts';
import { OutboxPayloadError, outboxMessage } from './outbox';

describe('outboxMessage', () => {
  it('builds the envelope, exchange and routing key from the message definition', () => {
    const row = outboxMessage(
      BusMessages.sendEmail,
      { ref_id: 'R', tenant_id: 't', copy_id: 'R.1', attempt: 1 },
      { tenantId: 't' },
    );
    expect(row).toMatchObject({
      exchange: Exchange.commands,
      routingKey: 'send.email',
      envelope: { type: 'send.email', version: 1, tenant_id: 't', payload: { copy_id: 'R.1' } },
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
      outboxMessage(BusMessages.sendEmail, { ref_id: 'R', tenant_id: 't', copy_id: 'R.1', attempt: 0 }),
    ).toThrow(OutboxPayloadError);
    // An SMTP_ERROR without its attempt metadata (SPEC events rule 1) is refused too.
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
