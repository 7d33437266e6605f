/**
 * Walks a Graph participant search over a time window despite the 1000-result cap of `$search`
 * (Outlook participant search answers at most 1000 results per query; docs/providers.md): a window whose search
 * reaches the cap is split in two halves, each searched (and split) again, newest half first,
 * until every window answers below the cap or is too short to split (KQL dates are days, so a
 * window under a day cannot be narrowed further; its results are kept and the walk reports
 * `truncated`). Results are deduplicated by id (widened KQL ranges overlap) and kept only inside
 * the exact window. The search itself is passed in, so this stays pure.
 */
import { type GraphWindow, inGraphWindow } from './graph-query';

export const MIN_SPLIT_MS = 86_400_000;

/** The two halves of `w` (newer first) split at a whole second, or null when `w` is too short. */
export function splitWindow(w: GraphWindow, minSpanMs = MIN_SPLIT_MS): [GraphWindow, GraphWindow] | null {
  const since = Math.floor(w.since.getTime() / 1000);
  const until = Math.floor(w.until.getTime() / 1000);
  if ((until - since) * 1000 < minSpanMs) return null;
  const mid = since + Math.floor((until - since) / 2);
  return [
    { since: new Date((mid + 1) * 1000), until: new Date(until * 1000) },
    { since: new Date(since * 1000), until: new Date(mid * 1000) },
  ];
}

export interface Windowed {
  id: string;
  receivedAt: Date;
}

export async function searchByWindows<T extends Windowed>(
  window: GraphWindow,
  search: (w: GraphWindow) => Promise<T[]>,
  cap: number,
  minSpanMs = MIN_SPLIT_MS,
): Promise<{ items: T[]; truncated: boolean; searches: number }> {
  const byId = new Map<string, T>();
  let truncated = false;
  let searches = 0;
  const walk = async (w: GraphWindow): Promise<void> => {
    searches++;
    const found = await search(w);
    const halves = found.length >= cap ? splitWindow(w, minSpanMs) : null;
    if (halves) {
      for (const half of halves) await walk(half);
      return;
    }
    if (found.length >= cap) truncated = true;
    for (const item of found) if (inGraphWindow(item.receivedAt, w)) byId.set(item.id, item);
  };
  await walk(window);
  const items = [...byId.values()].sort((a, b) => b.receivedAt.getTime() - a.receivedAt.getTime());
  return { items, truncated, searches };
}
