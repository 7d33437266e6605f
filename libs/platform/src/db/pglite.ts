import { mkdirSync } from 'node:fs';
import { pgliteWasm } from './pglite-wasm';
import type { Db, QueryResult, Queryable, Row } from './types';

/**
 * Embedded PostgreSQL (WASM) kept in `dataDir`; `memory://` keeps it in memory. PGlite is loaded
 * on first use (a process on PostgreSQL never loads it) and runs the module of pglite-wasm.ts.
 */
export async function openPglite(dataDir: string): Promise<Db> {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true });
  const [{ PGlite }, wasm] = await Promise.all([import('@electric-sql/pglite'), pgliteWasm()]);
  const db = await PGlite.create(dataDir, { wasmModule: wasm.module as never });

  const wrap = <T>(res: { rows: unknown[]; affectedRows?: number }): QueryResult<T> => ({
    rows: res.rows as T[],
    rowCount: res.affectedRows ?? res.rows.length,
  });

  return {
    kind: 'pglite',
    async query<T = Row>(sql: string, params?: readonly unknown[]) {
      return wrap<T>(await db.query(sql, params as unknown[] | undefined));
    },
    transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      return db.transaction(async (tx) =>
        fn({
          query: async <R = Row>(sql: string, params?: readonly unknown[]) =>
            wrap<R>(await tx.query(sql, params as unknown[] | undefined)),
        }),
      );
    },
    async check() {
      await db.query('SELECT 1');
    },
    async close() {
      await db.close();
    },
  };
}
