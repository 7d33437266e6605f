import { type EmailEvent, EmailEventSchema, emptyTracking } from '../events/email-event';
import { EmailEventGroupSchema, decodeEmailEventMessage } from './email-event-message';

const event = (name: EmailEvent['event'], at: string): EmailEvent =>
  EmailEventSchema.parse({
    event: name,
    success: name === 'MAIL_DELIVERED',
    details: {
      ref_id: '01JREF',
      mailer_id: 'domain_1',
      email: ['a@x.test'],
      custom_args: null,
      message_id: '',
      thread_id: '',
      webhook_id: '',
      event_at: at,
      tracking: emptyTracking(),
      failed_reason: '',
      ...(name === 'SMTP_ERROR' ? { attempt: 1, max_attempts: 5, retry_scheduled: true } : {}),
    },
  });
// As the bus delivers it: through JSON, keys in jsonb's order (the outbox is jsonb), stray keys.
const wire = (v: unknown) => JSON.parse(JSON.stringify(v));

describe('decodeEmailEventMessage', () => {
  it('version 1: the event with the envelope trace', () => {
    const e = event('MAIL_DELIVERED', '2026-01-01T00:00:00.000001Z');
    expect(
      decodeEmailEventMessage(1, wire({ success: true, details: e.details, event: e.event }), 'tp'),
    ).toEqual({
      ok: true,
      events: [{ event: e, traceparent: 'tp' }],
    });
  });

  it('version 2: the events in order as the schema returns them, each with its trace', () => {
    const group = {
      events: [
        { event: event('SMTP_ERROR', '2026-01-01T00:00:00.000001Z'), traceparent: 'a', stray: 1 },
        { event: event('SMTP_ERROR', '2026-01-01T00:00:00.000002Z') },
      ],
      extra: true,
    };
    const decoded = decodeEmailEventMessage(2, wire(group));
    expect(decoded).toEqual({ ok: true, events: EmailEventGroupSchema.parse(wire(group)).events });
    expect(JSON.stringify(decoded.ok && decoded.events)).toBe(
      JSON.stringify(EmailEventGroupSchema.parse(wire(group)).events),
    );
  });

  it('refuses a group of mixed types, an empty group, an invalid event and an unknown version', () => {
    const mixed = {
      events: [
        { event: event('MAIL_DELIVERED', '2026-01-01T00:00:00Z') },
        { event: event('SMTP_ERROR', '2026-01-01T00:00:01Z') },
      ],
    };
    const refused = (v: number, p: unknown) => {
      const d = decodeEmailEventMessage(v, wire(p));
      return d.ok ? 'accepted' : d.error;
    };
    expect(refused(2, mixed)).toMatch(/every event of a group must be MAIL_DELIVERED/);
    expect(refused(2, { events: [] })).toMatch(/at least 1/);
    const e = event('MAIL_DELIVERED', '2026-01-01T00:00:00Z');
    expect(refused(1, { ...e, details: { ...e.details, event_at: 'yesterday' } })).toMatch(/RFC 3339/);
    expect(refused(3, event('MAIL_DELIVERED', '2026-01-01T00:00:00Z'))).toBe('unknown version 3');
  });
});
