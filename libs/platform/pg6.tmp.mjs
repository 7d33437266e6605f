import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
const f = (x) => (x / 1048576).toFixed(0);
const opts = {};
if (process.env.SB) {
  const path = new URL('./pglite.wasm', import.meta.resolve('@electric-sql/pglite'));
  const bytes = readFileSync(path);
  const from = Buffer.from('shared_buffers=128MB\0');
  const at = bytes.indexOf(from);
  const to = Buffer.alloc(from.length);
  to.write(`shared_buffers=${process.env.SB}`);
  to.copy(bytes, at);
  opts.wasmModule = await WebAssembly.compile(bytes);
}
const db = await PGlite.create(process.argv[2], opts);
await db.query('create table if not exists t(id serial primary key, v text)');
for (let i = 0; i < 50; i++)
  await db.query("insert into t(v) select repeat('x', 200) from generate_series(1,100)");
await new Promise((r) => setTimeout(r, 2000));
const m = process.memoryUsage();
console.log(
  process.env.SB ?? '128MB',
  process.execArgv.join(' '),
  process.env.MALLOC_ARENA_MAX ?? '',
  'rss',
  f(m.rss),
  'heap',
  f(m.heapUsed),
  'ext',
  f(m.external),
);
