/**
 * GET /v1/events/stream as an async iterator (docs/client.md "Live events"): one connection,
 * read with fetch streaming and parsed by sse.ts, yielding each email event with its id. The
 * iterator ends when the server ends the stream; aborting `signal` ends it quietly. A non-2xx
 * answer throws the typed error of errors.ts, a failed connection a MailyardNetworkError.
 * Reconnecting is the caller's (pass the last `id` back as `lastEventId`): `pnpm cli tail`
 * does it with back-off.
 */
import type { EmailEvent, EmailEventType } from '@mailyard/contracts';
import { MailyardNetworkError, apiErrorFor } from './errors';
import { type HttpOptions, buildUrl, parseRetryAfter } from './http';
import { SseParser } from './sse';

export const EVENTS_STREAM_PATH = '/v1/events/stream';

export interface EventStreamFilters {
  /** Only these event types. */
  event?: EmailEventType | readonly EmailEventType[];
  /** Only the events of this send. */
  refId?: string;
  /** Only events naming this recipient (case-insensitive). */
  email?: string;
}

export interface EventStreamOptions {
  filters?: EventStreamFilters;
  /** Resume after this event id (the gateway replays what it still holds; docs/api/events-stream.md). */
  lastEventId?: string;
  /** Aborting it closes the connection and ends the iterator without an error. */
  signal?: AbortSignal;
}

export interface StreamedEvent {
  /** Stable id of the event, usable as `lastEventId`. */
  id: string;
  /** The event object, as webhooks carry it (details.webhook_id is ''). */
  event: EmailEvent;
}

export async function* streamEvents(
  http: HttpOptions,
  options: EventStreamOptions = {},
): AsyncGenerator<StreamedEvent> {
  const f = options.filters ?? {};
  const url = buildUrl(http.basePath, EVENTS_STREAM_PATH, {
    event: f.event === undefined ? undefined : typeof f.event === 'string' ? f.event : f.event.join(','),
    ref_id: f.refId,
    email: f.email,
  });
  const headers: Record<string, string> = {
    Authorization: `Bearer ${http.apiKey}`,
    Accept: 'text/event-stream',
    ...(http.userAgent ? { 'User-Agent': http.userAgent } : {}),
    ...(options.lastEventId ? { 'Last-Event-ID': options.lastEventId } : {}),
  };
  const signal = options.signal;
  let res: Response;
  try {
    res = await http.fetch(url, { method: 'GET', headers, signal });
  } catch (err) {
    if (signal?.aborted) return;
    throw new MailyardNetworkError('GET', EVENTS_STREAM_PATH, err);
  }
  if (!res.ok) {
    const text = await res.text().catch(() => '');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    throw apiErrorFor(
      res.status,
      body,
      'GET',
      EVENTS_STREAM_PATH,
      parseRetryAfter(res.headers.get('retry-after')),
    );
  }
  if (!res.body) return;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new SseParser();
  try {
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (err) {
        if (signal?.aborted) return;
        throw new MailyardNetworkError('GET', EVENTS_STREAM_PATH, err);
      }
      if (chunk.done) return;
      for (const m of parser.push(chunk.value)) {
        if (m.event === 'message') continue;
        yield { id: m.id, event: JSON.parse(m.data) as EmailEvent };
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
