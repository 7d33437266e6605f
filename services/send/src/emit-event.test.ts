import { buildEmailEvent } from './emit-event';

const ctx = {
  tenantId: 't',
  refId: '01JABCDEFGHJKMNPQRSTVWXYZ0',
  mailerId: 'oauth_smtp_1',
  customArgs: null,
  attempt: 1,
};
const delivered = {
  event: 'MAIL_DELIVERED' as const,
  copyId: '01JABCDEFGHJKMNPQRSTVWXYZ0.1',
  recipients: [{ logId: 'l1', email: 'ann@example.test', failureReason: '' }],
  failedReason: '',
  messageId: '18c0000000000001',
};

describe('buildEmailEvent', () => {
  it("reports the provider's thread as thread_id", () => {
    const e = buildEmailEvent(
      ctx,
      { ...delivered, threadId: '18c0000000000000' },
      '2024-01-01T00:00:00.000Z',
    );
    expect(e.details).toMatchObject({ message_id: '18c0000000000001', thread_id: '18c0000000000000' });
    expect(e.success).toBe(true);
  });

  it('leaves thread_id empty when there is none (SMTP)', () => {
    expect(buildEmailEvent(ctx, delivered, '2024-01-01T00:00:00.000Z').details.thread_id).toBe('');
  });
});
