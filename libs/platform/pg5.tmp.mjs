import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { PGlite } from '@electric-sql/pglite';
const f = (x) => (x / 1048576).toFixed(0);
const sb = process.argv[2];
const opts = {};
if (sb) {
  const path = new URL('./pglite.wasm', import.meta.resolve('@electric-sql/pglite'));
  const bytes = readFileSync(path);
  const from = Buffer.from('shared_buffers=128MB\0');
  const at = bytes.indexOf(from);
  const to = Buffer.alloc(from.length);
  to.write(`shared_buffers=${sb}`);
  to.copy(bytes, at);
  opts.wasmModule = await WebAssembly.compile(bytes);
}
const db = await PGlite.create(process.argv[3] ?? 'memory://', opts);
console.log(
  sb,
  (await db.query('SHOW shared_buffers')).rows[0],
  'rss',
  f(process.memoryUsage().rss),
  'ext',
  f(process.memoryUsage().external),
);
await db.query('create table t(id serial primary key, v text)');
for (let i = 0; i < 200; i++)
  await db.query("insert into t(v) select repeat('x', 200) from generate_series(1,100)");
console.log((await db.query('select count(*) from t')).rows[0], 'rss', f(process.memoryUsage().rss));
