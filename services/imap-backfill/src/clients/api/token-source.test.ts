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
    const source = mailerTokenSource(tokens, 't1', 'm1');
    expect(await source()).toBe('at-1');
    const [a, b] = await Promise.all([source({ rejected: 'at-1' }), source({ rejected: 'at-1' })]);
    expect([a, b]).toEqual(['at-2', 'at-2']);
    expect(calls.filter((c) => c === 'invalidate')).toHaveLength(1);
    // A request refused with the older token (sent before the refresh) gets the current one.
    expect(await source({ rejected: 'at-1' })).toBe('at-2');
    expect(calls.filter((c) => c === 'invalidate')).toHaveLength(1);
  });
});
