import { createHmac } from 'node:crypto';
import { signWebhook } from '../src/webhook-signature';

describe('signWebhook (Standard Webhooks)', () => {
  it('matches the specification’s example signature', () => {
    // Example from the Standard Webhooks specification / reference libraries' tests.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const msgId = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
    const ts = 1614265330;
    const body = '{"test": 2432232314}';
    expect(signWebhook(secret, msgId, ts, body)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs id.timestamp.body with the decoded key bytes', () => {
    const key = Buffer.alloc(32, 9);
    const expected = createHmac('sha256', key).update('id.1.{}').digest('base64');
    expect(signWebhook(`whsec_${key.toString('base64')}`, 'id', 1, '{}')).toBe(`v1,${expected}`);
  });
});
