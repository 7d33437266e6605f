/**
 * GET /v1/events/stream (docs/api/events-stream.md): the tenant's email events as Server-Sent
 * Events. Authenticated by the /v1 guard like every route (any key scope that may read);
 * filters validated before anything streams (bad input: the 400 envelope); the connection slot
 * reserved before the subscription is awaited (limits: 429 per tenant, 503 per process); the
 * headers say `text/event-stream`, no caching, no proxy buffering.
 */
import { parseEventStreamQuery } from '@mailyard/contracts';
import { HttpError, badRequest } from '@mailyard/platform';
import { Router } from 'express';
import { tenantOf } from '../auth/api-key-auth';
import type { EventHub } from './event-hub';

export const EVENTS_STREAM_PATH = '/v1/events/stream';
/** Longest Last-Event-ID honoured (ids are `<26-char ULID>.<index>`); a longer one is ignored. */
const MAX_LAST_EVENT_ID = 64;
/** Reconnect delay suggested to EventSource clients (`retry:`). */
const RETRY_MS = 3_000;

export function eventStreamRoutes(hub: EventHub): Router {
  const router = Router();

  router.get(EVENTS_STREAM_PATH, async (req, res) => {
    const parsed = parseEventStreamQuery(req.query);
    if (!parsed.success) throw badRequest(parsed.error);
    const { tenantId } = tenantOf(res);
    const release = hub.reserve(tenantId);
    try {
      await hub.ready();
    } catch {
      release();
      throw new HttpError(503, 'The event stream is unavailable; try again later', {
        headers: { 'Retry-After': '5' },
      });
    }
    if (req.socket.destroyed) {
      release();
      return;
    }
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.write(`retry: ${RETRY_MS}\n: connected\n\n`);
    req.socket.setNoDelay(true);
    const header = req.headers['last-event-id'];
    const lastEventId = typeof header === 'string' && header.length <= MAX_LAST_EVENT_ID ? header : undefined;
    const client = hub.attach(tenantId, parsed.data, res, lastEventId);
    res.once('close', () => {
      hub.detach(client);
      release();
    });
  });

  return router;
}
