import { isReservedWebhookHeader } from '@mailyard/contracts';
import { Webhook } from 'standardwebhooks';
import { USER_AGENT, requestHeaders } from './request-headers';

const base = {
  headers: { 'X-Auth': 'token' },
  body: '{"a":1}',
  deliveryId: 'whd_1',
  secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
  traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
};

describe('requestHeaders', () => {
  it('sends custom headers verbatim, then the service’s own, signed', () => {
    const r = requestHeaders(
      { ...base, extraHeaders: { 'X-History-Backfill-Job-Id': 'job1' } },
      1_767_225_600,
    );
    expect(r).toEqual({
      ok: true,
      headers: {
        'User-Agent': USER_AGENT,
        'X-Auth': 'token',
        'X-History-Backfill-Job-Id': 'job1',
        'Content-Type': 'application/json',
        traceparent: base.traceparent,
        'webhook-id': 'whd_1',
        'webhook-timestamp': '1767225600',
        'webhook-signature': expect.stringMatching(/^v1,/),
      },
    });
    if (!r.ok) return;
    // An independent Standard Webhooks verifier accepts it (timestamp tolerance aside).
    const now = Date.now;
    Date.now = () => 1_767_225_600_000;
    try {
      expect(new Webhook(base.secret).verify(base.body, r.headers)).toEqual({ a: 1 });
    } finally {
      Date.now = now;
    }
  });

  it('a custom User-Agent replaces ours, in any case', () => {
    for (const name of ['User-Agent', 'user-agent']) {
      const r = requestHeaders({ ...base, headers: { [name]: 'receiver-check/1' } }, 1);
      expect(r.ok && Object.entries(r.headers).filter(([n]) => n.toLowerCase() === 'user-agent')).toEqual([
        [name, 'receiver-check/1'],
      ]);
    }
  });

  it('no signature without a secret, no traceparent without a trace', () => {
    const r = requestHeaders({ ...base, secret: null, traceparent: null }, 1);
    expect(r.ok && Object.keys(r.headers)).toEqual([
      'User-Agent',
      'X-Auth',
      'Content-Type',
      'webhook-id',
      'webhook-timestamp',
    ]);
  });

  it.each([
    [
      { 'Transfer-Encoding': 'chunked' },
      'stored headers refused: headers.Transfer-Encoding cannot be set: the service sets this header',
    ],
    [
      { 'Content-Length': '0' },
      'stored headers refused: headers.Content-Length cannot be set: the service sets this header',
    ],
    [
      { Host: 'internal' },
      'stored headers refused: headers.Host cannot be set: the service sets this header',
    ],
    [
      { 'X-A': 'a\u0001b' },
      'stored headers refused: headers.X-A must be a string of printable ASCII characters without control characters (at most 8192)',
    ],
    [
      { 'X A': 'v' },
      'stored headers refused: headers names must be HTTP header names (at most 256 characters)',
    ],
    [
      { 'x-history-backfill-job-id': 'forged' },
      'stored headers refused: headers.x-history-backfill-job-id cannot be set: the service sets this header',
    ],
  ])('headers stored before the rule (%j) make the request one that is not built', (headers, error) => {
    expect(requestHeaders({ ...base, headers }, 1)).toEqual({ ok: false, error });
  });

  it('every header the service sets itself is the service’s (a custom User-Agent aside)', () => {
    const r = requestHeaders({ ...base, extraHeaders: { 'X-History-Backfill-Job-Id': 'job1' } }, 1);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    // Whatever the service sets beyond the custom headers is a reserved name, so no custom header
    // can be accepted at registration and then replaced or dropped here.
    const ours = Object.keys(r.headers).filter(
      (n) => !(n in base.headers) && n.toLowerCase() !== 'user-agent',
    );
    expect(ours.length).toBeGreaterThan(0);
    for (const name of ours) expect(isReservedWebhookHeader(name)).toBe(true);
  });

  it('a delivery’s own headers pass the same rule', () => {
    expect(requestHeaders({ ...base, extraHeaders: { 'webhook-id': 'forged' } }, 1)).toEqual({
      ok: false,
      error:
        'stored headers refused: delivery headers.webhook-id cannot be set: the service sets this header',
    });
  });
});
