import pg from 'pg';
import type { Db, QueryResult, Queryable, Row } from './types';

// int8 (bigserial, count(*)) as number: our counters stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));

const statementNames = new Map<string, string>();
const MAX_NAMED_STATEMENTS = 500;

function statementName(sql: string): string | undefined {
  let name = statementNames.get(sql);
  if (name === undefined) {
    if (statementNames.size >= MAX_NAMED_STATEMENTS) return undefined;
    name = `s${statementNames.size}`;
    statementNames.set(sql, name);
  }
  return name;
}

export function openPostgres(url: string, poolSize = 10): Db {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 5000 });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});

  const run = async <T>(client: pg.Pool | pg.PoolClient, sql: string, params?: readonly unknown[]) => {
    // Parameterised statements are prepared once per connection and reused by name.
    const res = params?.length
      ? await client.query({ name: statementName(sql), text: sql, values: params as unknown[] })
      : await client.query(sql);
    return { rows: res.rows as T[], rowCount: res.rowCount ?? 0 } satisfies QueryResult<T>;
  };

  return {
    kind: 'postgres',
    query: <T = Row>(sql: string, params?: readonly unknown[]) => run<T>(pool, sql, params),
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn({
          query: <R = Row>(sql: string, params?: readonly unknown[]) => run<R>(client, sql, params),
        });
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    async check() {
      await pool.query('SELECT 1');
    },
    async close() {
      await pool.end();
    },
  };
}
