import type { Queryable } from '@mailyard/platform';

/**
 * Opaque page tokens: base64url JSON of the last row's sort key. Lists order by a unique,
 * creation-ordered id, so pages have no duplicates or gaps while rows are added.
 */
export function encodeCursor(lastId: string): string {
  return Buffer.from(JSON.stringify({ v: 1, after: lastId })).toString('base64url');
}

/** Ids are ASCII (`<prefix>_<ulid>`, copy ids `<ulid>.<n>`): a forged token cannot smuggle NUL or odd text into SQL. */
const CURSOR_ID = /^[A-Za-z0-9_.~-]{1,200}$/;

/** Returns the id to continue after, or null when the token is not one of ours. */
export function decodeCursor(token: string): string | null {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
      v?: number;
      after?: unknown;
    };
    return parsed?.v === 1 && typeof parsed.after === 'string' && CURSOR_ID.test(parsed.after)
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

export class InvalidCursorError extends Error {
  override name = 'InvalidCursorError';
}

/** The id a page token continues after, null for the first page; InvalidCursorError for a token not ours. */
export function pageAfter(pageToken: string | undefined): string | null {
  if (pageToken === undefined) return null;
  const after = decodeCursor(pageToken);
  if (after === null) throw new InvalidCursorError();
  return after;
}

/**
 * Tokens for lists ordered by a composite key instead of a unique id (suppressions: created_at,
 * email): base64url JSON of the last row's key parts. `valid` checks the parts a token carries
 * (each list knows the shape of its key), so a forged token cannot put odd text into SQL.
 */
export function encodeKeyCursor(key: readonly string[]): string {
  return Buffer.from(JSON.stringify({ v: 2, key })).toString('base64url');
}

/** The key a page token continues after, null for the first page; InvalidCursorError for a token not ours. */
export function pageAfterKey(
  pageToken: string | undefined,
  valid: (key: readonly string[]) => boolean,
): string[] | null {
  if (pageToken === undefined) return null;
  let parsed: { v?: unknown; key?: unknown } | null = null;
  try {
    parsed = JSON.parse(Buffer.from(pageToken, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError();
  }
  const key = parsed?.v === 2 ? parsed.key : null;
  if (!Array.isArray(key) || !key.every((k): k is string => typeof k === 'string') || !valid(key))
    throw new InvalidCursorError();
  return key;
}

/** Turns `pageSize + 1` fetched rows into a page and the key token of the next one. */
export function toKeyPage<T>(rows: T[], pageSize: number, keyOf: (row: T) => readonly string[]): Page<T> {
  const items = rows.slice(0, pageSize);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > pageSize && last ? encodeKeyCursor(keyOf(last)) : null };
}

export interface PageRequest {
  pageSize: number;
  pageToken?: string;
}

/**
 * One page of a tenant's rows in id order, and how many there are in all. `sql.page` takes the
 * tenant ($1), the id to continue after ($2) and the limit ($3); `sql.count` the tenant ($1) and
 * answers `n`.
 */
export async function listPage<R, T extends { id: string }>(
  db: Queryable,
  tenantId: string,
  page: PageRequest,
  sql: { page: string; count: string },
  toItem: (row: R) => T,
): Promise<Page<T> & { totalCount: number }> {
  const after = pageAfter(page.pageToken) ?? '';
  const { rows } = await db.query<R>(sql.page, [tenantId, after, page.pageSize + 1]);
  const count = await db.query<{ n: number | string }>(sql.count, [tenantId]);
  return {
    ...toPage(rows.map(toItem), page.pageSize, (t) => t.id),
    totalCount: Number(count.rows[0]?.n ?? 0),
  };
}
