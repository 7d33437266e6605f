import { readFileSync } from 'node:fs';
import v8 from 'node:v8';
import { PGlite } from '@electric-sql/pglite';
if (process.env.FLAGS) v8.setFlagsFromString(process.env.FLAGS);
const f = (x) => (x / 1048576).toFixed(0);
const opts = {};
const path = new URL('./pglite.wasm', import.meta.resolve('@electric-sql/pglite'));
const bytes = readFileSync(path);
const from = Buffer.from('shared_buffers=128MB\0');
const at = bytes.indexOf(from);
const to = Buffer.alloc(from.length);
to.write(`shared_buffers=16MB`);
to.copy(bytes, at);
opts.wasmModule = await WebAssembly.compile(bytes);
const db = await PGlite.create(process.argv[2], opts);
await db.query('create table if not exists t(id serial primary key, v text, n int)');
const c0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < Number(process.env.N ?? 3000); i++) {
  await db.query('insert into t(v, n) values ($1, $2)', ['x'.repeat(100), i]);
  await db.query('select * from t where id = $1', [i]);
}
const t1 = performance.now();
const c1 = process.cpuUsage(c0);
await new Promise((r) => setTimeout(r, 2000));
const m = process.memoryUsage();
console.log(
  process.env.FLAGS ?? '',
  process.execArgv.join(' '),
  'cpu_ms',
  ((c1.user + c1.system) / 1000) | 0,
  'wall',
  (t1 - t0) | 0,
  'rss',
  f(m.rss),
  'heap',
  f(m.heapUsed),
  'ext',
  f(m.external),
);
