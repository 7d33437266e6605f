import { randomUUID } from 'node:crypto';
import { childTraceparent, runWithTrace } from '../trace/context';
import type { HttpNext, HttpRequest, HttpResponse } from './http-types';

const REQUEST_ID_RE = /^[\w.:-]{1,128}$/;

/**
 * Gives each request an id and a traceparent (continuing the caller's trace), in async context.
 * Plain node request/response: express's chain and the fast routes (fast-route.ts) both run it.
 */
export function requestContext(req: HttpRequest, res: HttpResponse, next: HttpNext): void {
  const incomingId = req.headers['x-request-id'] as string | undefined;
  const requestId = incomingId && REQUEST_ID_RE.test(incomingId) ? incomingId : randomUUID();
  const traceparent = childTraceparent(req.headers.traceparent as string | undefined);
  res.setHeader('X-Request-Id', requestId);
  res.setHeader('traceparent', traceparent);
  res.locals.requestId = requestId;
  runWithTrace({ requestId, traceparent }, next);
}
