import { LIVE_MARGIN_MS, livePosition, readLiveCursor, relistFrom } from './live-cursor';

describe('API live-sync cursors', () => {
  it('round-trip through the stored position; another service or a broken cursor reads as none', () => {
    const p = livePosition('gmail', { h: '1234', t: '2026-01-01T00:00:00.000Z' });
    expect(p).toMatchObject({ validity: 'gmail', lastUid: 0 });
    expect(readLiveCursor(p, 'gmail', ['h', 't'])).toEqual({ h: '1234', t: '2026-01-01T00:00:00.000Z' });
    expect(readLiveCursor(p, 'outlook', ['h', 't'])).toBeNull();
    expect(readLiveCursor(p, 'gmail', ['d'])).toBeNull();
    expect(readLiveCursor({ validity: 'gmail', lastUid: 0, cursor: '{not json' }, 'gmail', ['h'])).toBeNull();
    expect(readLiveCursor({ validity: 'gmail', lastUid: 0, cursor: null }, 'gmail', ['h'])).toBeNull();
    expect(readLiveCursor({ validity: '12', lastUid: 40, cursor: null }, 'gmail', ['h'])).toBeNull();
    expect(readLiveCursor({ validity: 'gmail', lastUid: 0, cursor: '{"h":""}' }, 'gmail', ['h'])).toBeNull();
    const graph = livePosition('outlook', { d: 'https://graph/delta?x', s: 'a', t: 'b' });
    expect(readLiveCursor(graph, 'outlook', ['s', 't'])?.d).toBe('https://graph/delta?x');
    expect(
      readLiveCursor(livePosition('outlook', { s: 'a', t: 'b' }), 'outlook', ['s', 't'])?.d,
    ).toBeUndefined();
  });

  it('re-listing starts the margin before the round began', () => {
    expect(relistFrom('2026-01-01T00:10:00.000Z').getTime()).toBe(
      Date.parse('2026-01-01T00:10:00.000Z') - LIVE_MARGIN_MS,
    );
    expect(relistFrom('garbage').getTime()).toBe(0);
  });
});
