import { guardedAgents } from '@mailyard/platform';
import { deliver } from './deliver';

const req = {
  url: 'http://127.0.0.1:9/never-reached',
  method: 'POST',
  headers: {},
  body: '{}',
  deliveryId: 'whd_1',
  secret: null,
  traceparent: null,
};
const deps = { agents: guardedAgents({ allowPrivate: true }), timeoutMs: 1000 };

describe('deliver: a request that cannot be built is a failed attempt, never an exception', () => {
  it('headers refused by the rule', async () => {
    await expect(deliver({ ...req, headers: { 'Content-Length': '0' } }, deps)).resolves.toEqual({
      ok: false,
      statusCode: null,
      latencyMs: 0,
      error: 'stored headers refused: headers.Content-Length cannot be set: the service sets this header',
    });
  });

  it('anything Node’s client throws on while building it (here a method that is not a token)', async () => {
    await expect(deliver({ ...req, method: 'BAD METHOD' }, deps)).resolves.toEqual({
      ok: false,
      statusCode: null,
      latencyMs: 0,
      error: 'request could not be built (ERR_INVALID_HTTP_TOKEN)',
    });
  });

  it('a URL that does not parse', async () => {
    await expect(deliver({ ...req, url: 'not a url' }, deps)).resolves.toMatchObject({
      ok: false,
      error: 'invalid webhook URL',
    });
  });
});
