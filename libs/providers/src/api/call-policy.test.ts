import { OAuthRevokedError, ProviderThrottledError } from '../oauth/types';
import { type CallFailure, DEFAULT_RETRY_POLICY, callProvider, retryDelay } from './call-policy';
import { ProviderAuthError } from './errors';

const policy = { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 300, maxWaitMs: 1000 };

describe('retryDelay', () => {
  it("uses the provider's Retry-After when given", () => {
    expect(retryDelay(policy, 1, 750)).toBe(750);
    expect(retryDelay(policy, 1, 0)).toBe(0);
  });

  it('backs off exponentially with jitter between half and all of the step, capped', () => {
    expect(retryDelay(policy, 1, null, () => 0)).toBe(50);
    expect(retryDelay(policy, 1, null, () => 1)).toBe(100);
    expect(retryDelay(policy, 2, null, () => 1)).toBe(200);
    expect(retryDelay({ ...policy, maxAttempts: 9 }, 5, null, () => 1)).toBe(300);
  });

  it('gives up when the tries are used or the wait is longer than the policy sits out', () => {
    expect(retryDelay(policy, 3, 10)).toBeNull();
    expect(retryDelay(policy, 1, 1001)).toBeNull();
  });

  it('has a bounded default', () => {
    expect(DEFAULT_RETRY_POLICY.maxAttempts).toBeGreaterThan(1);
    expect(retryDelay(DEFAULT_RETRY_POLICY, DEFAULT_RETRY_POLICY.maxAttempts, 0)).toBeNull();
  });
});

/** Runs callProvider over a scripted sequence of outcomes (a failure kind or a value). */
function script(outcomes: Array<CallFailure | 'ok'>, tokens: string[] = ['t1', 't2', 't3']) {
  const seen: string[] = [];
  const asked: Array<string | undefined> = [];
  const waits: number[] = [];
  let i = 0;
  let t = 0;
  const call = callProvider({
    provider: 'Test API',
    policy,
    tokens: async (req?: { rejected?: string }) => {
      asked.push(req?.rejected);
      return tokens[t++]!;
    },
    run: async (token) => {
      seen.push(token);
      const o = outcomes[i++];
      if (o === 'ok') return 'done';
      throw o;
    },
    classify: (err) => err as CallFailure,
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
  return { call, seen, asked, waits };
}

describe('callProvider', () => {
  it('asks for a new token once after a 401, naming the refused one', async () => {
    const s = script([{ kind: 'unauthorized', message: 'expired' }, 'ok']);
    await expect(s.call).resolves.toBe('done');
    expect(s.seen).toEqual(['t1', 't2']);
    expect(s.asked).toEqual([undefined, 't1']);
  });

  it('fails with ProviderAuthError on a second 401', async () => {
    const s = script([
      { kind: 'unauthorized', message: 'bad' },
      { kind: 'unauthorized', message: 'still bad' },
    ]);
    await expect(s.call).rejects.toThrow(ProviderAuthError);
    expect(s.seen).toEqual(['t1', 't2']);
  });

  it('retries a busy provider after its Retry-After, then reports throttling with the last wait', async () => {
    const busy: CallFailure = { kind: 'busy', status: 429, retryAfterMs: 200, message: 'slow down' };
    const s = script([busy, busy, busy]);
    const err = await s.call.catch((e) => e);
    expect(err).toBeInstanceOf(ProviderThrottledError);
    expect(err).toMatchObject({ status: 429, retryAfterMs: 200 });
    expect(s.waits).toEqual([200, 200]);
    expect(s.seen).toHaveLength(3);
  });

  it('hands a long Retry-After to the caller at once', async () => {
    const s = script([{ kind: 'busy', status: 503, retryAfterMs: 60_000, message: 'maintenance' }]);
    await expect(s.call).rejects.toMatchObject({ name: 'ProviderThrottledError', retryAfterMs: 60_000 });
    expect(s.waits).toEqual([]);
  });

  it('does not retry a 403 and throws other errors as they are', async () => {
    await expect(script([{ kind: 'denied', status: 403, message: 'no scope' }]).call).rejects.toThrow(
      ProviderAuthError,
    );
    const other = new Error('bad request');
    await expect(script([{ kind: 'error', error: other }]).call).rejects.toBe(other);
  });

  it("passes the token source's OAuthRevokedError through", async () => {
    const call = callProvider({
      provider: 'Test API',
      policy,
      tokens: async () => {
        throw new OAuthRevokedError('invalid_grant');
      },
      run: async () => 'never',
      classify: (err) => ({ kind: 'error', error: err }),
    });
    await expect(call).rejects.toThrow(OAuthRevokedError);
  });
});
