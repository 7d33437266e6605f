import {
  ProviderAuthError,
  ProviderRequestError,
  ProviderThrottledError,
  type Transmission,
} from '@mailyard/providers';
import { SparkPostTransport } from './sparkpost-transport';

const envelope = { from: 'a@sender.test', to: ['ann@example.com', 'bcc@example.com'] };
const raw = Buffer.from('Subject: hi\r\n\r\nbody');
const copy = { refId: 'ref1', copyId: 'copy1' };

function transport(answer: () => Promise<{ id: string; accepted: number; rejected: number }>) {
  const sent: Transmission[] = [];
  const t = new SparkPostTransport({
    send: (x) => {
      sent.push(x);
      return answer();
    },
  });
  return { t, sent };
}

describe('SparkPostTransport', () => {
  it('sends one transmission for every envelope recipient and reports them accepted, pending the callback', async () => {
    const { t, sent } = transport(async () => ({ id: '4242', accepted: 2, rejected: 0 }));
    const results = await t.deliver(envelope, raw, { copy, campaignId: 'spring' });
    expect(sent).toEqual([
      {
        rfc822: raw,
        recipients: envelope.to,
        metadata: { ref_id: 'ref1', copy_id: 'copy1' },
        campaignId: 'spring',
      },
    ]);
    expect(results).toEqual(
      envelope.to.map((email) => ({
        email,
        ok: true,
        response: 'Accepted by SparkPost (transmission 4242)',
        pending: { transmissionId: '4242' },
      })),
    );
  });

  it('words SparkPost’s refusals: auth deactivates, busy retries, other 4xx is final', async () => {
    const failureOf = async (err: Error) => {
      const [r] = await transport(() => Promise.reject(err)).t.deliver(envelope, raw, { copy });
      return r!.ok ? null : r!.failure;
    };
    expect(await failureOf(new ProviderAuthError('SparkPost 401: Unauthorized.', 401))).toMatchObject({
      kind: 'auth',
      deactivation: 'provider_auth_error',
      failedReason: expect.stringContaining('PUT /v1/mailer/sparkpost'),
      providerError: 'SparkPost 401: Unauthorized.',
    });
    expect(await failureOf(new ProviderThrottledError('SparkPost 429: slow down', 429, 5000))).toMatchObject({
      kind: 'temporary',
      retryAfterMs: 5000,
      failedReason: 'Temporary failure: SparkPost is rate limiting the mailer (retry after 5 s)',
    });
    expect(await failureOf(new ProviderRequestError('SparkPost 422: bad', 422, '1400'))).toMatchObject({
      kind: 'permanent',
      failedReason: 'SparkPost refused the message (422)',
      providerError: 'SparkPost 422: bad',
    });
  });
});
