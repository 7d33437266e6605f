import type { GraphWindow } from './graph-query';
import { searchByWindows, splitWindow } from './search-window';

const DAY = 86_400_000;
const start = Date.parse('2024-01-01T00:00:00Z');

describe('splitWindow', () => {
  it('halves at a whole second, newer half first, without overlap or gap', () => {
    const w = { since: new Date(start), until: new Date(start + 4 * DAY - 1000) };
    const [newer, older] = splitWindow(w)!;
    expect(older.since).toEqual(w.since);
    expect(newer.until).toEqual(w.until);
    expect(newer.since.getTime() - older.until.getTime()).toBe(1000);
    expect(older.until.getTime() % 1000).toBe(0);
  });

  it('does not split a window shorter than the minimum span', () => {
    expect(splitWindow({ since: new Date(start), until: new Date(start + DAY - 1000) })).toBeNull();
  });
});

/** A mailbox of `n` messages spread evenly over `days`, searched with a cap and a day-widened range. */
function mailbox(n: number, days: number) {
  const items = Array.from({ length: n }, (_, i) => ({
    id: `m${i}`,
    receivedAt: new Date(start + Math.floor((i * days * DAY) / n)),
  }));
  return (cap: number) => async (w: GraphWindow) => {
    const from = Math.floor(w.since.getTime() / DAY) * DAY - DAY;
    const to = Math.floor(w.until.getTime() / DAY) * DAY + 2 * DAY;
    return items.filter((m) => m.receivedAt.getTime() >= from && m.receivedAt.getTime() < to).slice(0, cap);
  };
}

describe('searchByWindows', () => {
  const window = { since: new Date(start), until: new Date(start + 30 * DAY - 1000) };

  it('returns everything from one search below the cap', async () => {
    const r = await searchByWindows(window, mailbox(300, 30)(1000), 1000);
    expect(r.items).toHaveLength(300);
    expect(r.searches).toBe(1);
    expect(r.truncated).toBe(false);
  });

  it('splits windows that reach the cap until every message is found once, newest first', async () => {
    const r = await searchByWindows(window, mailbox(2500, 30)(1000), 1000);
    expect(r.items).toHaveLength(2500);
    expect(new Set(r.items.map((m) => m.id)).size).toBe(2500);
    expect(r.searches).toBeGreaterThan(1);
    expect(r.truncated).toBe(false);
    const times = r.items.map((m) => m.receivedAt.getTime());
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it('reports truncation when a window under a day still reaches the cap', async () => {
    const r = await searchByWindows(window, mailbox(5000, 1)(100), 100);
    expect(r.truncated).toBe(true);
    expect(r.items.length).toBeLessThan(5000);
  });
});
