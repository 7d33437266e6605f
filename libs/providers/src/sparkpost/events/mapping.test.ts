import { mapSparkPostEvent } from './mapping';
import { SPARKPOST_SAMPLE_TYPES, sparkPostSample } from './samples';
import { parseSparkPostBatch, sparkPostTime } from './wire';

const ours = { rcpt_meta: { ref_id: '01JREF', copy_id: '01JREF.0' }, rcpt_to: 'ada@example.com' };
const eventOf = (type: string, o: Record<string, unknown> = {}) =>
  Object.values(sparkPostSample(type, { ...ours, ...o }).msys)[0];
const map = (type: string, o: Record<string, unknown> = {}) => mapSparkPostEvent(eventOf(type, o));
const mapped = (type: string, o: Record<string, unknown> = {}) => {
  const r = map(type, o);
  if (r.kind !== 'mapped') throw new Error(`${type} not mapped: ${JSON.stringify(r)}`);
  return r.mapped;
};

describe('parseSparkPostBatch', () => {
  it('reads the events of a batch, in order, across classes', () => {
    const r = parseSparkPostBatch([sparkPostSample('delivery'), sparkPostSample('list_unsubscribe')]);
    expect(r).toEqual({
      ok: true,
      events: [
        expect.objectContaining({ type: 'delivery' }),
        expect.objectContaining({ type: 'list_unsubscribe' }),
      ],
    });
  });

  it('accepts the test ping, which carries no event', () => {
    expect(parseSparkPostBatch([{ msys: {} }])).toEqual({ ok: true, events: [] });
  });

  it.each([
    ['an object', { msys: {} }],
    ['a string', 'hello'],
    ['null', null],
    ['an entry without msys', [{ foo: 1 }]],
    ['msys not an object', [{ msys: 3 }]],
    ['an event that is not an object', [{ msys: { message_event: 'x' } }]],
  ])('refuses %s', (_what, body) => {
    expect(parseSparkPostBatch(body)).toEqual({ ok: false, error: expect.any(String) });
  });
});

describe('sparkPostTime', () => {
  it('reads unix seconds and RFC 3339', () => {
    expect(sparkPostTime('1454442600')?.toISOString()).toBe('2016-02-02T19:50:00.000Z');
    expect(sparkPostTime('1454442600.25')?.toISOString()).toBe('2016-02-02T19:50:00.250Z');
    expect(sparkPostTime('2016-04-18T14:25:07.000+00:00')?.toISOString()).toBe('2016-04-18T14:25:07.000Z');
  });
  it.each(['', 'yesterday', '2016-13-45T99:00:00Z', '-5'])('refuses %j', (t) => {
    expect(sparkPostTime(t)).toBeNull();
  });
});

describe('mapSparkPostEvent', () => {
  it('maps delivery to a final MAIL_DELIVERED with SparkPost message_id and time', () => {
    expect(mapped('delivery')).toEqual({
      eventId: '92356927693813856',
      sparkPostType: 'delivery',
      event: 'MAIL_DELIVERED',
      refId: '01JREF',
      copyId: '01JREF.0',
      email: 'ada@example.com',
      at: new Date('2016-02-02T19:50:00.000Z'),
      messageId: '000443ee14578172be22',
      failedReason: '',
      suppress: null,
      final: true,
    });
  });

  it.each([
    ['bounce', '10', 'invalid_recipient', 'hard_bounce'],
    ['bounce', '30', 'invalid_recipient', 'hard_bounce'],
    // an unsubscribe request mailed back: still suppressed, as what it is (was hard_bounce)
    ['bounce', '90', 'unknown', 'unsubscribed'],
    ['out_of_band', '10', 'invalid_recipient', 'hard_bounce'],
    ['bounce', '1', 'unknown', null],
    ['bounce', '20', 'unknown', null],
    ['bounce', '21', 'dns', null],
    ['bounce', '22', 'mailbox_full', null],
    ['bounce', '23', 'content', null],
    ['bounce', '24', 'unknown', null],
    ['bounce', '25', 'policy', null],
    ['bounce', '40', 'unknown', null],
    ['bounce', '50', 'reputation', null],
    ['bounce', '51', 'reputation', null],
    ['bounce', '52', 'content', null],
    ['bounce', '53', 'content', null],
    ['bounce', '54', 'policy', null],
    ['out_of_band', '54', 'policy', null],
    ['bounce', '70', 'unknown', null],
  ])('maps %s of class %s to MAIL_BOUNCE of category %s suppressing %s', (type, cls, category, suppress) => {
    const m = mapped(type, { bounce_class: cls });
    expect(m.event).toBe('MAIL_BOUNCE');
    expect(m.bounceCategory).toBe(category);
    expect(m.suppress).toBe(suppress);
    expect(m.final).toBe(false);
  });

  it('classifies a bounce without a known class from its raw reason (one classifier)', () => {
    expect(
      mapped('bounce', { bounce_class: '999', raw_reason: '550 5.1.1 <a@example.com>: user unknown' }),
    ).toMatchObject({ bounceCategory: 'invalid_recipient', suppress: 'hard_bounce' });
    expect(
      mapped('bounce', { bounce_class: undefined, raw_reason: '554 5.7.1 blocked using zen.spamhaus.org' }),
    ).toMatchObject({ bounceCategory: 'reputation', suppress: null });
  });

  it('relays error_code and num_retries verbatim on bounces, with the class meaning and raw reason', () => {
    const m = mapped('bounce', { bounce_class: '10', error_code: '550', num_retries: '0' });
    expect(m).toMatchObject({
      errorCode: '550',
      numRetries: '0',
      failedReason: 'Invalid Recipient (bounce class 10): 000 Example Remote MTA Bounce Message',
      providerError: '554 5.5.0 Recipient address rejected',
    });
    expect(mapped('bounce', { error_code: 554, num_retries: 2 })).toMatchObject({
      errorCode: '554',
      numRetries: '2',
    });
  });

  it('falls back to the provider reason for an unknown bounce class', () => {
    expect(mapped('bounce', { bounce_class: '999' }).failedReason).toBe(
      '000 Example Remote MTA Bounce Message',
    );
  });

  it.each([
    ['spam_complaint', 'MAIL_SPAM', 'spam_complaint', 'Spam complaint (abuse)'],
    ['list_unsubscribe', 'MAIL_UNSUBSCRIBED', 'unsubscribed', ''],
    ['link_unsubscribe', 'MAIL_UNSUBSCRIBED', 'unsubscribed', ''],
  ])('maps %s to %s, suppressing', (type, event, suppress, reason) => {
    expect(mapped(type)).toMatchObject({ event, suppress, failedReason: reason, final: false });
  });

  it.each([
    ['policy_rejection', 'MAIL_POLICY_REJECTION', true, '550 5.7.1 [internal] Forbidden'],
    [
      'generation_failure',
      'MAIL_GENERATION_FAILURE',
      false,
      expect.stringContaining('Error while rendering'),
    ],
    ['generation_rejection', 'MAIL_GENERATION_REJECTION', true, expect.stringContaining('customer policy')],
  ])('maps %s to %s (final %s), never suppressing', (type, event, final, reason) => {
    const m = mapped(type);
    expect(m).toMatchObject({ event, final, suppress: null, failedReason: reason });
    expect(m.providerError).toBeTruthy();
    expect(m.errorCode).toBeUndefined();
    expect(m.numRetries).toBeUndefined();
  });

  it.each([
    'injection',
    'delay',
    'open',
    'initial_open',
    'click',
    'amp_open',
    'relay_injection',
    'sms_status',
  ])('ignores %s', (type) => {
    const raw = SPARKPOST_SAMPLE_TYPES.includes(type)
      ? eventOf(type)
      : { type, event_id: '1', timestamp: '1' };
    expect(mapSparkPostEvent(raw)).toEqual({ kind: 'ignored', type });
  });

  it('reads ref_id/copy_id from metadata when rcpt_meta lacks them', () => {
    expect(mapped('delivery', { rcpt_meta: null, metadata: { ref_id: 'R', copy_id: 'C' } })).toMatchObject({
      refId: 'R',
      copyId: 'C',
    });
  });

  it('calls an event without our metadata foreign', () => {
    expect(map('bounce', { rcpt_meta: { customKey: 'customValue' } })).toEqual({
      kind: 'foreign',
      type: 'bounce',
      eventId: '92356927693813856',
    });
  });

  it.each([
    ['no event_id', { event_id: undefined }],
    ['a bad timestamp', { timestamp: 'soon' }],
    ['a non-string reason', { reason: { a: 1 } }],
  ])('calls an event with %s invalid', (_what, o) => {
    expect(map('bounce', o)).toEqual({ kind: 'invalid', why: expect.any(String) });
  });

  it('calls a non-object invalid', () => {
    expect(mapSparkPostEvent(null).kind).toBe('invalid');
    expect(mapSparkPostEvent('x').kind).toBe('invalid');
  });
});
