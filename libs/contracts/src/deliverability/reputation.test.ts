import type { EmailEvent } from '../events/email-event';
import { breachOf, formatRate, pausedMessage, reputationSignalOf } from './reputation';

const ev = (event: string, details: Record<string, unknown>) =>
  ({ event, details }) as unknown as Pick<EmailEvent, 'event' | 'details'>;
const s = { window: 20, bounceRate: 0.05, complaintRate: 0.001, minVolume: 10 };

describe('reputation rules', () => {
  it('counts invalid-recipient DSNs and final 5xx, complaints; nothing else', () => {
    expect(reputationSignalOf(ev('MAIL_BOUNCE', { bounce_category: 'invalid_recipient' }))).toBe(
      'invalid_bounce',
    );
    expect(reputationSignalOf(ev('MAIL_BOUNCE', { bounce_category: 'reputation' }))).toBeNull();
    expect(reputationSignalOf(ev('MAIL_BOUNCE', {}))).toBeNull();
    expect(
      reputationSignalOf(ev('SMTP_ERROR', { retry_scheduled: false, bounce_category: 'invalid_recipient' })),
    ).toBe('invalid_bounce');
    expect(
      reputationSignalOf(ev('SMTP_ERROR', { retry_scheduled: true, bounce_category: 'invalid_recipient' })),
    ).toBeNull();
    expect(reputationSignalOf(ev('MAIL_SPAM', {}))).toBe('complaint');
    expect(reputationSignalOf(ev('MAIL_DELIVERED', {}))).toBeNull();
  });

  it('breaches strictly above a threshold and only from the minimum volume', () => {
    expect(breachOf({ sent: 9, invalidRecipientBounces: 9, complaints: 0 }, s)).toBeNull();
    expect(breachOf({ sent: 20, invalidRecipientBounces: 1, complaints: 0 }, s)).toBeNull();
    expect(breachOf({ sent: 20, invalidRecipientBounces: 2, complaints: 0 }, s)).toEqual({
      metric: 'invalid_recipient_bounce_rate',
      rate: 0.1,
      threshold: 0.05,
    });
    expect(breachOf({ sent: 10, invalidRecipientBounces: 0, complaints: 1 }, s)?.metric).toBe(
      'complaint_rate',
    );
  });

  it('writes the 422 text', () => {
    expect(formatRate(0.0625)).toBe('6.3%');
    expect(formatRate(0.0015)).toBe('0.15%');
    expect(formatRate(0.1)).toBe('10%');
    expect(
      pausedMessage({
        scope: 'domain',
        key: 'example.com',
        metric: 'invalid_recipient_bounce_rate',
        rate: 0.062,
        window: 1000,
      }),
    ).toBe('Sending is paused for example.com: 6.2% invalid-recipient bounces over the last 1000 emails');
    expect(
      pausedMessage({ scope: 'mailer', key: 'm1', metric: 'complaint_rate', rate: 0.002, window: 500 }),
    ).toBe('Sending is paused for mailer m1: 0.2% complaints over the last 500 emails');
  });
});
