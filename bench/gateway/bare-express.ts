/** Baseline for bench/gateway: the smallest express app, answering a tiny JSON body. */
import express from 'express';

const app = express();
app.get('/hello', (_req, res) => {
  res.json({ success: true, hello: 'world' });
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : ''}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
