import type { OAuthAccessTokens } from '@mailyard/providers';
import { mailerTokenSource } from './token-source';

/** The lifecycle's contract in memory: a stored token, refreshed when invalidated. */
function lifecycle() {
  let stored = 'at-1';
  let issued = 1;
  let expired = false;
  const calls: string[] = [];
  const tokens: OAuthAccessTokens = {
    forMailer: () => async () => {
      calls.push('token');
      if (expired) {
        stored = `at-${++issued}`;
        expired = false;
      }
      return stored;
    },
    invalidate: async () => {
      calls.push('invalidate');
      expired = true;
    },
  };
  return { tokens, calls };
}

describe('mailerTokenSource', () => {
  it('a refused token is invalidated once and refreshed, shared by concurrent askers', async () => {
    const { tokens, calls } = lifecycle();
    const source = mailerTokenSource(tokens, 't1', 'm1', { reuseMs: 0 });
    expect(await source()).toBe('at-1');
    const [a, b] = await Promise.all([source({ rejected: 'at-1' }), source({ rejected: 'at-1' })]);
    expect([a, b]).toEqual(['at-2', 'at-2']);
    expect(calls.filter((c) => c === 'invalidate')).toHaveLength(1);
    // A request refused with the older token (sent before the refresh) gets the current one.
    expect(await source({ rejected: 'at-1' })).toBe('at-2');
    expect(calls.filter((c) => c === 'invalidate')).toHaveLength(1);
  });

  it('hands a token out again for reuseMs without asking; never one that was refused', async () => {
    const { tokens, calls } = lifecycle();
    let clock = 0;
    const source = mailerTokenSource(tokens, 't1', 'm1', { reuseMs: 10_000, now: () => clock });
    expect(await Promise.all([source(), source(), source()])).toEqual(['at-1', 'at-1', 'at-1']);
    clock = 9_999;
    expect(await source()).toBe('at-1');
    expect(calls).toEqual(['token']);
    clock = 10_000;
    expect(await source()).toBe('at-1');
    expect(calls).toEqual(['token', 'token']);
    // Refused by the provider: invalidated and refreshed at once, whatever its age.
    expect(await source({ rejected: 'at-1' })).toBe('at-2');
    expect(await source()).toBe('at-2');
    expect(calls).toEqual(['token', 'token', 'invalidate', 'token']);
  });
});
