/**
 * `BENCH_ONLY=steps` of bench/gateway/chain.ts: the CPU of each step of the fast send route
 * (POST /v1/email/send) measured on its own, so a change to one step can be sized without the
 * noise of the whole chain. Each step runs BENCH_STEP_CALLS (20000) times per run, BENCH_REPEATS
 * runs after a warm-up; the lowest CPU per call is reported (µs). Steps that wait (the guards,
 * the body reader, the accept) run BENCH_CONCURRENCY at a time, as the chain does.
 *
 * `promise hooks` is what AsyncLocalStorage costs every promise once a context was entered
 * (Node 20 turns on async_hooks promise hooks for the whole process): an async function with
 * ten awaits timed before and after the first `runWithTrace`.
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { findUnsafeText, parseSendRequest } from '@mailyard/contracts';
import {
  type HttpMiddleware,
  type HttpRequest,
  type HttpResponse,
  readJsonBody,
  runWithTrace,
  writeJson,
} from '@mailyard/platform';
import { requestContext } from '@mailyard/platform/src/http/request-context';
import { sendCommands } from '@mailyard/store';

const CALLS = Number(process.env.BENCH_STEP_CALLS ?? 20_000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);

export interface StepInputs {
  socket: () => Duplex;
  headers: Record<string, string>;
  body: string;
  limits: { limit: number; maxDepth: number; maxValues: number };
  guards: readonly HttpMiddleware[];
  handler: (req: HttpRequest, res: HttpResponse) => Promise<unknown>;
}

function pair(inputs: StepInputs, withBody: boolean): { req: HttpRequest; res: HttpResponse } {
  const socket = inputs.socket();
  const req = new IncomingMessage(socket as never);
  req.method = 'POST';
  req.url = '/v1/email/send';
  req.headers = { ...inputs.headers, 'content-length': String(Buffer.byteLength(inputs.body)) };
  req.complete = true;
  if (withBody) {
    req.push(inputs.body);
    req.push(null);
  }
  const res = new ServerResponse(req);
  res.assignSocket(socket as never);
  (res as HttpResponse).locals = Object.create(null);
  return { req: req as HttpRequest, res: res as HttpResponse };
}

async function measure(fn: (i: number) => unknown, concurrent: boolean): Promise<number> {
  const once = async () => {
    const cpu0 = process.cpuUsage();
    if (concurrent) {
      let next = 0;
      const worker = async () => {
        while (next < CALLS) await fn(next++);
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    } else for (let i = 0; i < CALLS; i++) fn(i);
    const cpu = process.cpuUsage(cpu0);
    return (cpu.user + cpu.system) / CALLS;
  };
  await once();
  const runs: number[] = [];
  for (let r = 0; r < REPEATS; r++) runs.push(await once());
  return Number(Math.min(...runs).toFixed(2));
}

const middleware = (mw: HttpMiddleware, req: HttpRequest, res: HttpResponse) =>
  new Promise<void>((resolve, reject) => {
    const ret = mw(req, res, (err) => (err ? reject(err) : resolve()));
    if (ret instanceof Promise) ret.catch(reject);
  });

async function tenAwaits(): Promise<number> {
  let n = 0;
  for (let i = 0; i < 10; i++) n += await Promise.resolve(i);
  return n;
}

/** CPU µs per call of each step, in the order the fast route runs them. */
export async function sendSteps(inputs: StepInputs): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  // Before anything enters an async context (the promise hooks are still off).
  out['10 awaits, promise hooks off'] = await measure(() => tenAwaits(), true);
  runWithTrace({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }, () => {});
  out['10 awaits, promise hooks on'] = await measure(() => tenAwaits(), true);

  // Harness: a request and response over a null socket (what every other step also builds).
  out['harness: request + response'] = await measure(() => pair(inputs, false), false);
  out.requestContext = await measure(() => {
    const { req, res } = pair(inputs, false);
    requestContext(req, res, () => {});
  }, false);
  // Guards: API key (cache hit) then rate limit (one kv hit per turn), with a context entered.
  out.guards = await measure(() => {
    const { req, res } = pair(inputs, false);
    return runWithTrace({ traceparent: '' }, async () => {
      for (const g of inputs.guards) await middleware(g, req, res);
    });
  }, true);
  const parsedBody = JSON.parse(inputs.body) as unknown;
  out.readJsonBody = await measure(() => {
    const { req } = pair(inputs, true);
    return new Promise<void>((resolve, reject) =>
      readJsonBody(req, inputs.limits, (err) => (err ? reject(err) : resolve())),
    );
  }, true);
  out['  of it: findUnsafeText'] = await measure(() => findUnsafeText(parsedBody), false);
  out.parseSendRequest = await measure(() => {
    if (!parseSendRequest(parsedBody).success) throw new Error('bench body is invalid');
  }, false);
  // The handler: validation, accept (group commit against the stand-in database), answer body.
  out['send handler (validate + accept)'] = await measure(() => {
    const { req, res } = pair(inputs, false);
    (req as HttpRequest & { body: unknown }).body = JSON.parse(inputs.body);
    return runWithTrace({ traceparent: '' }, async () => {
      for (const g of inputs.guards) await middleware(g, req, res);
      return inputs.handler(req, res);
    });
  }, true);
  out['  of it: guards (above)'] = out.guards;
  out['  of it: sendCommands (one copy)'] = await measure(
    (i) =>
      sendCommands(
        [
          {
            tenantId: 'tenant_bench',
            refId: `01JBENCHSTEPS${i}`,
            copyIds: [`01JBENCHSTEPS${i}.1`],
            traceparent: undefined,
          },
        ],
        100,
      ),
    false,
  );
  const answer = { success: true, ref_id: '01JBENCHSTEPS0000000000000', message: 'queued' };
  out.writeJson = await measure(() => {
    const { res } = pair(inputs, false);
    writeJson(res, 200, answer);
  }, false);
  return out;
}
