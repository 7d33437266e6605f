import { recipientEvent } from '../events/email-event';
import { eventStreamId, eventStreamMatches, parseEventStreamQuery } from './events-stream';

const subject = {
  refId: 'REF1',
  mailerId: 'm1',
  email: 'Reader@Example.com',
  customArgs: null,
  messageId: '',
  threadId: '',
};

describe('parseEventStreamQuery', () => {
  it('accepts no filters and each filter', () => {
    expect(parseEventStreamQuery({})).toEqual({ success: true, data: {} });
    expect(
      parseEventStreamQuery({
        event: 'mail_delivered, MAIL_BOUNCE,MAIL_DELIVERED',
        ref_id: 'R',
        email: 'A@B.io',
      }),
    ).toEqual({
      success: true,
      data: { event: ['MAIL_DELIVERED', 'MAIL_BOUNCE'], ref_id: 'R', email: 'a@b.io' },
    });
    expect(parseEventStreamQuery({ event: '' })).toEqual({ success: true, data: {} });
  });

  it('refuses unknown events, bad addresses, long ref ids, repeated and unknown parameters', () => {
    const error = (q: unknown) => {
      const r = parseEventStreamQuery(q);
      return r.success ? 'accepted' : r.error;
    };
    expect(error({ event: 'MAIL_DELIVERED,NOPE' })).toMatch(
      /^event must be a comma-separated list of MAIL_DELIVERED/,
    );
    expect(error({ event: ',' })).toMatch(/^event must be/);
    expect(error({ email: 'not-an-address' })).toBe('email must be a valid email address');
    expect(error({ ref_id: 'x'.repeat(65) })).toBe('ref_id must be at most 64 characters');
    expect(error({ ref_id: ['a', 'b'] })).not.toBe('accepted');
    expect(error({ refId: 'R' })).toBe('unknown query parameter: the filters are event, ref_id and email');
  });
});

describe('eventStreamMatches', () => {
  const delivered = recipientEvent('MAIL_DELIVERED', subject);
  it('combines the filters with AND, the event list with OR, the address case-insensitively', () => {
    expect(eventStreamMatches({}, delivered)).toBe(true);
    expect(eventStreamMatches({ event: ['MAIL_BOUNCE', 'MAIL_DELIVERED'] }, delivered)).toBe(true);
    expect(eventStreamMatches({ event: ['MAIL_BOUNCE'] }, delivered)).toBe(false);
    expect(eventStreamMatches({ ref_id: 'REF1', email: 'reader@example.com' }, delivered)).toBe(true);
    expect(eventStreamMatches({ ref_id: 'REF2' }, delivered)).toBe(false);
    expect(eventStreamMatches({ email: 'other@example.com' }, delivered)).toBe(false);
  });
});

it('eventStreamId is the bus message id and the index in it', () => {
  expect(eventStreamId('01ABC', 2)).toBe('01ABC.2');
});
