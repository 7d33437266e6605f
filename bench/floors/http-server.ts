/**
 * The HTTP accept floor's server (floors.ts): the least a Node server of the mandated stack does
 * per `POST /v1/email/send` before the 200, and nothing else: read the JSON body, parse it, answer
 * the gateway's response shape (`{success, ref_id, message}`) as JSON. `FLOOR_SERVER=node` is a
 * bare node:http server (the gateway's send route runs in front of express, on node:http),
 * `express` the same on express with express.json() (the bare express baseline of bench:gateway,
 * with a body). Leaves out what the gateway does besides: auth, rate limit, validation, the
 * durable commit (the store floor), ids, metrics, logging.
 */
import { createServer } from 'node:http';
import express from 'express';

const ANSWER_PREFIX = '{"success":true,"ref_id":"';
let n = 0;
/** A 26-character id, as long as a ULID (no randomness: ids are not the floor's subject). */
const nextId = () => String(++n).padStart(26, '0');
const answer = () => `${ANSWER_PREFIX}${nextId()}","message":"queued"}`;

const kind = process.env.FLOOR_SERVER ?? 'node';
const server =
  kind === 'express'
    ? (() => {
        const app = express();
        app.use(express.json({ limit: '10mb' }));
        app.post('/v1/email/send', (req, res) => {
          if (typeof req.body !== 'object' || req.body === null) res.status(400);
          res.type('application/json').send(answer());
        });
        return createServer(app);
      })()
    : createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          let ok = true;
          try {
            JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            ok = false;
          }
          const body = ok ? answer() : '{"success":false}';
          res.writeHead(ok ? 200 : 400, {
            'content-type': 'application/json; charset=utf-8',
            'content-length': Buffer.byteLength(body),
          });
          res.end(body);
        });
      });

server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : ''}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
