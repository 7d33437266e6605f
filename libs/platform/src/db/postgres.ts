/**
 * PostgreSQL through a `pg` pool. A restart or failover of the server must never take the
 * process down: every client carries an 'error' listener for its whole life (idle in the pool
 * AND checked out in a transaction, where the pool itself listens to nothing), and a client
 * that broke while checked out is released with the error so the pool destroys it instead of
 * handing it to the next caller.
 */
import pg from 'pg';
import { counter } from '../metrics/registry';
import type { Db, QueryResult, Queryable, Row } from './types';

// Round trips to PostgreSQL (BEGIN/COMMIT included) and transactions: what a pipeline costs the
// database per message (bench/send reads them per process).
const statements = counter('mailyard_db_statements_total', 'Statements sent to PostgreSQL');
const transactions = counter(
  'mailyard_db_transactions_total',
  'Explicit PostgreSQL transactions (single statements outside are their own)',
);

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

/** The last connection-level error each client reported (a server shutdown, a reset socket). */
const brokenClients = new WeakMap<pg.ClientBase, Error>();

export function openPostgres(url: string, poolSize = 10): Db {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 5000,
    // A peer that vanished without closing the socket is noticed by TCP keep-alive.
    keepAlive: true,
  });
  // An idle client losing its connection: the pool has already removed it; /readyz and the
  // failing queries report the outage.
  pool.on('error', () => {});
  // Every client, from its first connect to its end: the listener that makes an 'error' event
  // (e.g. 57P01 "terminating connection due to administrator command" arriving between two
  // statements of a transaction) harmless. The transaction below reads what it recorded.
  pool.on('connect', (client) => {
    client.on('error', (err: Error) => brokenClients.set(client, err));
  });

  const run = async <T>(client: pg.Pool | pg.PoolClient, sql: string, params?: readonly unknown[]) => {
    statements.inc();
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
      // Set when the connection broke or the transaction could not be closed cleanly: the
      // client goes back with the error and the pool destroys it.
      let releaseError: Error | undefined;
      transactions.inc();
      statements.inc(2); // BEGIN and COMMIT (or ROLLBACK)
      try {
        await client.query('BEGIN');
        const result = await fn({
          query: <R = Row>(sql: string, params?: readonly unknown[]) => run<R>(client, sql, params),
        });
        await client.query('COMMIT');
        return result;
      } catch (err) {
        releaseError = brokenClients.get(client);
        if (!releaseError) {
          await client.query('ROLLBACK').catch((rollbackErr: Error) => {
            releaseError = rollbackErr;
          });
        }
        throw err;
      } finally {
        client.release(releaseError ?? brokenClients.get(client));
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
