import { ProviderAuthError, ProviderRequestError } from '../api/errors';
import { ProviderThrottledError } from '../oauth/types';
import { classifyProviderFailure } from '../provider-failure';
import { classifySparkPostResponse, sparkPostErrorText, sparkPostNoAnswer } from './classify-sparkpost-error';

const errors = (...e: object[]) => JSON.stringify({ errors: e });

describe('classifySparkPostResponse', () => {
  it.each([401, 403])('%i: the key is refused (auth, deactivates the mailer)', (status) => {
    const err = classifySparkPostResponse(status, errors({ message: 'Unauthorized.' }), undefined);
    expect(err).toBeInstanceOf(ProviderAuthError);
    expect(err.message).toBe(`SparkPost ${status}: Unauthorized.`);
    expect(classifyProviderFailure(err)).toMatchObject({ kind: 'access-refused', status });
  });

  it.each([429, 500, 502, 503, 504])('%i: busy, a retried attempt, with Retry-After', (status) => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    const err = classifySparkPostResponse(status, '', '30', now);
    expect(err).toBeInstanceOf(ProviderThrottledError);
    expect(classifyProviderFailure(err)).toMatchObject({ kind: 'throttled', status, retryAfterMs: 30_000 });
  });

  it('other 4xx: final, with SparkPost’s message, description and code', () => {
    const body = errors({
      message: 'Invalid data',
      description: 'Message generation rejected',
      code: '1902',
    });
    const err = classifySparkPostResponse(400, body, undefined);
    expect(err).toBeInstanceOf(ProviderRequestError);
    expect(err.message).toBe('SparkPost 400: Invalid data: Message generation rejected');
    expect((err as ProviderRequestError).reason).toBe('1902');
    expect(classifyProviderFailure(err)).toMatchObject({ kind: 'request-refused', refusal: 'invalid' });
    expect(classifyProviderFailure(classifySparkPostResponse(413, '', undefined))).toMatchObject({
      refusal: 'too-large',
    });
    expect(classifyProviderFailure(classifySparkPostResponse(422, '', undefined))).toMatchObject({
      kind: 'request-refused',
      status: 422,
    });
  });
});

describe('sparkPostErrorText', () => {
  it('joins every error; a body that is not SparkPost’s shape reads as the status', () => {
    expect(
      sparkPostErrorText(400, errors({ message: 'a' }, { message: 'b', description: 'c', code: 7 })),
    ).toEqual({ text: 'a; b: c', code: '' });
    expect(sparkPostErrorText(502, '<html>Bad gateway</html>')).toEqual({ text: 'HTTP 502', code: '' });
    expect(sparkPostErrorText(400, JSON.stringify({ errors: 'nope' }))).toEqual({
      text: 'HTTP 400',
      code: '',
    });
    expect(sparkPostErrorText(400, errors({ message: 'x'.repeat(5000) })).text).toHaveLength(1000);
  });
});

describe('sparkPostNoAnswer', () => {
  it('is a busy failure without a status', () => {
    const err = sparkPostNoAnswer(Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' }));
    expect(classifyProviderFailure(err)).toMatchObject({
      kind: 'throttled',
      busy: 'no-answer',
      status: null,
    });
    expect(err.message).toBe('SparkPost did not answer: ECONNREFUSED: connect refused');
  });
});
