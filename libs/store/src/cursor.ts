/**
 * Opaque page tokens: base64url JSON of the last row's sort key. Lists order by a unique,
 * creation-ordered id, so pages have no duplicates or gaps while rows are added.
 */
export function encodeCursor(lastId: string): string {
  return Buffer.from(JSON.stringify({ v: 1, after: lastId })).toString('base64url');
}

/** Returns the id to continue after, or null when the token is not one of ours. */
export function decodeCursor(token: string): string | null {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
      v?: number;
      after?: unknown;
    };
    return parsed.v === 1 && typeof parsed.after === 'string' && parsed.after.length <= 200
      ? parsed.after
      : null;
  } catch {
    return null;
  }
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Turns `pageSize + 1` fetched rows into a page and the token of the next one. */
export function toPage<T>(rows: T[], pageSize: number, idOf: (row: T) => string): Page<T> {
  const items = rows.slice(0, pageSize);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > pageSize && last ? encodeCursor(idOf(last)) : null };
}
