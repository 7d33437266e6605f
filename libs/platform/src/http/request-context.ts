import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { childTraceparent, runWithTrace } from '../trace/context';

const REQUEST_ID_RE = /^[\w.:-]{1,128}$/;

/** Gives each request an id and a traceparent (continuing the caller's trace), in async context. */
export function requestContext(req: Request, res: Response, next: NextFunction): void {
  const incomingId = req.get('x-request-id');
  const requestId = incomingId && REQUEST_ID_RE.test(incomingId) ? incomingId : randomUUID();
  const traceparent = childTraceparent(req.get('traceparent'));
  res.setHeader('X-Request-Id', requestId);
  res.setHeader('traceparent', traceparent);
  res.locals.requestId = requestId;
  runWithTrace({ requestId, traceparent }, next);
}
