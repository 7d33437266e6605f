/**
 * Embedded PostgreSQL as openDatabase starts it (db/pglite-wasm.ts): the buffer cache is 16 MB
 * instead of PGlite's built-in 128 MB, on a fresh in-memory database and on a data directory
 * opened again, and the database works (migrations, writes, reads).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Db, migrate, openDatabase } from '../src/db';
import { pgliteWasm } from '../src/db/pglite-wasm';

jest.setTimeout(120_000);

const config = (DATA_DIR: string) => ({ DATA_DIR, DATABASE_URL: undefined, DB_POOL_SIZE: 1 });
const sharedBuffers = async (db: Db) =>
  (await db.query<{ shared_buffers: string }>('SHOW shared_buffers')).rows[0]?.shared_buffers;

it('patches the module of the installed PGlite', async () => {
  expect((await pgliteWasm()).sharedBuffersPatched).toBe(true);
});

it('runs an in-memory database with a 16 MB buffer cache', async () => {
  const db = await openDatabase(config('memory://'));
  try {
    expect(await sharedBuffers(db)).toBe('16MB');
    await migrate(db);
    await db.query('CREATE TABLE footprint_probe (id int PRIMARY KEY, v text)');
    await db.query("INSERT INTO footprint_probe SELECT g, repeat('x', 500) FROM generate_series(1, 5000) g");
    const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM footprint_probe');
    expect(rows[0]?.n).toBe(5000);
  } finally {
    await db.close();
  }
});

it('keeps the setting when a data directory is opened again', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mailyard-pglite-'));
  try {
    const first = await openDatabase(config(dir));
    await first.query('CREATE TABLE kept (v text)');
    await first.query("INSERT INTO kept VALUES ('still here')");
    await first.close();
    const again = await openDatabase(config(dir));
    try {
      expect(await sharedBuffers(again)).toBe('16MB');
      expect((await again.query<{ v: string }>('SELECT v FROM kept')).rows).toEqual([{ v: 'still here' }]);
    } finally {
      await again.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
