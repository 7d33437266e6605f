/**
 * The gateway process's fan-out of email events to its event-stream clients
 * (docs/api/events-stream.md, docs/operations.md "Live events").
 *
 * - One transient bus subscription per process (Bus.subscribe: its own exclusive, auto-delete
 *   queue bound to `email.#` on the events exchange), taken when the first client connects and
 *   given up LINGER_MS after the last one left (a reconnecting client finds it still there, and
 *   its Last-Event-ID still in the replay ring). No clients, no queue, no work per event.
 * - Each bus message is decoded once for all clients; each event's SSE frame is built once, the
 *   first time a client of its tenant matches, and written to every matching client of that
 *   tenant only. No database query per event.
 * - The bus handler never waits on a client (writes are buffered by each response up to its cap,
 *   then the client is dropped: stream-client.ts); the subscription acknowledges on receipt. A
 *   best-effort live view: what arrives while the process is not subscribed is not streamed.
 * - Limits: clients per tenant (429) and per process (503), reserved before the response starts.
 */
import {
  EMAIL_EVENT_MESSAGE,
  type EmailEvent,
  type EventStreamQuery,
  Exchange,
  decodeEmailEventMessage,
  eventStreamId,
  eventStreamMatches,
} from '@mailyard/contracts';
import { type Bus, type Consumer, type Delivery, HttpError, type Logger } from '@mailyard/platform';
import { streamClientsDropped, streamEventsSent, streamsConnected, streamsRefused } from './metrics';
import { ReplayBuffer } from './replay-buffer';
import { StreamClient } from './stream-client';

/** How long the subscription outlives the last client. */
const LINGER_MS = 60_000;
/** Bus messages the subscription's queue holds for a process that falls behind (oldest dropped). */
const MAX_QUEUED = 10_000;

export interface EventHubOptions {
  maxPerTenant: number;
  maxClients: number;
  /** Bytes a client's response may hold unsent before the client is dropped. */
  clientBufferBytes: number;
  heartbeatMs: number;
  /** Events kept for Last-Event-ID resumes (0: none). */
  replay: number;
}

interface StreamedEvent {
  id: string;
  tenantId: string;
  event: EmailEvent;
  frame: string | undefined;
}

/** The SSE frame of one event: `id`, `event` = its type, `data` = the event object as JSON. */
export function sseFrame(id: string, event: EmailEvent): string {
  return `id: ${id}\nevent: ${event.event}\ndata: ${JSON.stringify(event)}\n\n`;
}

const frameOf = (e: StreamedEvent): string => {
  e.frame ??= sseFrame(e.id, e.event);
  return e.frame;
};

export class EventHub {
  private readonly byTenant = new Map<string, Set<StreamClient>>();
  /** Connections admitted: the clients plus those still starting. */
  private readonly reserved = new Map<string, number>();
  private reservedTotal = 0;
  private clients = 0;
  private subscription: Promise<Consumer> | null = null;
  private lingerTimer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private readonly replay: ReplayBuffer<StreamedEvent>;
  private closed = false;

  constructor(
    private readonly bus: Bus,
    private readonly logger: Logger,
    readonly options: EventHubOptions,
  ) {
    this.replay = new ReplayBuffer(options.replay);
  }

  /**
   * Takes a connection slot for `tenantId` or throws the 429/503 envelope. The returned function
   * gives it back (call it once: when the stream ends or fails to start).
   */
  reserve(tenantId: string): () => void {
    if (this.closed)
      throw new HttpError(503, 'The server is shutting down', { headers: { 'Retry-After': '1' } });
    const mine = this.reserved.get(tenantId) ?? 0;
    if (mine >= this.options.maxPerTenant) {
      streamsRefused.inc({ limit: 'tenant' });
      throw new HttpError(
        429,
        `Too many event streams for this account (at most ${this.options.maxPerTenant} at a time)`,
        { headers: { 'Retry-After': '5' } },
      );
    }
    if (this.reservedTotal >= this.options.maxClients) {
      streamsRefused.inc({ limit: 'process' });
      throw new HttpError(503, 'Too many event streams on this server; try again later', {
        headers: { 'Retry-After': '5' },
      });
    }
    this.reserved.set(tenantId, mine + 1);
    this.reservedTotal++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.reserved.get(tenantId) ?? 1) - 1;
      if (left > 0) this.reserved.set(tenantId, left);
      else this.reserved.delete(tenantId);
      this.reservedTotal--;
    };
  }

  /** Resolves once the bus subscription is in place (rejects when it cannot be taken). */
  ready(): Promise<void> {
    this.stopLinger();
    if (!this.subscription) {
      const taking = this.bus
        .subscribe(
          { bindings: [{ exchange: Exchange.events, routingKey: 'email.#' }], maxQueued: MAX_QUEUED },
          (d) => this.onMessage(d),
        )
        .catch((err) => {
          if (this.subscription === taking) this.subscription = null;
          throw err;
        });
      this.subscription = taking;
      this.logger.info('event stream: bus subscription taken');
    }
    return this.subscription.then(() => undefined);
  }

  /**
   * Registers a client whose response headers are sent; replays what followed `lastEventId`
   * when the ring still has it (else says so in a comment).
   */
  attach(
    tenantId: string,
    filter: EventStreamQuery,
    res: import('node:http').ServerResponse,
    lastEventId?: string,
  ): StreamClient {
    const client = new StreamClient(tenantId, filter, res, this.options.clientBufferBytes, (c) => {
      streamClientsDropped.inc({ reason: 'slow' });
      this.logger.warn('event stream: client dropped, it stopped reading', { tenant_id: c.tenantId });
      this.detach(c);
    });
    let set = this.byTenant.get(tenantId);
    if (!set) {
      set = new Set();
      this.byTenant.set(tenantId, set);
    }
    set.add(client);
    this.clients++;
    streamsConnected.inc();
    this.startHeartbeat();
    if (lastEventId) {
      const missed = this.replay.after(lastEventId, tenantId);
      if (missed === null) client.send(': Last-Event-ID not found here: live events from now on\n\n');
      else for (const e of missed) if (eventStreamMatches(filter, e.event)) client.send(frameOf(e));
    }
    return client;
  }

  /** Forgets a client (idempotent); the last one out starts the linger. */
  detach(client: StreamClient): void {
    client.markClosed();
    const set = this.byTenant.get(client.tenantId);
    if (!set?.delete(client)) return;
    if (set.size === 0) this.byTenant.delete(client.tenantId);
    this.clients--;
    streamsConnected.dec();
    if (this.clients === 0) {
      this.stopHeartbeat();
      this.startLinger();
    }
  }

  get connected(): number {
    return this.clients;
  }

  /** Ends every stream and gives up the subscription (process shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    for (const set of [...this.byTenant.values()])
      for (const c of [...set]) {
        c.end();
        this.detach(c);
      }
    this.stopHeartbeat();
    this.stopLinger();
    await this.unsubscribe();
  }

  private onMessage(d: Delivery): void {
    const { envelope } = d;
    const tenantId = envelope.tenant_id;
    if (envelope.type !== EMAIL_EVENT_MESSAGE || !tenantId) return;
    const clients = this.byTenant.get(tenantId);
    if (!clients && this.options.replay === 0) return;
    const decoded = decodeEmailEventMessage(envelope.version, envelope.payload, envelope.traceparent);
    if (!decoded.ok) {
      this.logger.warn('event stream: invalid email.event message skipped', {
        message_id: envelope.id,
        error: decoded.error,
      });
      return;
    }
    let sent = 0;
    decoded.events.forEach((item, i) => {
      const e: StreamedEvent = {
        id: eventStreamId(envelope.id, i),
        tenantId,
        event: item.event,
        frame: undefined,
      };
      this.replay.push(e);
      if (!clients) return;
      for (const c of clients) {
        if (eventStreamMatches(c.filter, e.event) && c.send(frameOf(e))) sent++;
      }
    });
    if (sent > 0) streamEventsSent.inc(sent);
  }

  private startHeartbeat(): void {
    if (this.heartbeatTimer) return;
    this.heartbeatTimer = setInterval(() => {
      for (const set of [...this.byTenant.values()]) for (const c of [...set]) c.send(': heartbeat\n\n');
    }, this.options.heartbeatMs);
    this.heartbeatTimer.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
  }

  private startLinger(): void {
    this.stopLinger();
    this.lingerTimer = setTimeout(() => {
      this.lingerTimer = null;
      if (this.clients === 0) void this.unsubscribe();
    }, LINGER_MS);
    this.lingerTimer.unref();
  }

  private stopLinger(): void {
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    this.lingerTimer = null;
  }

  private async unsubscribe(): Promise<void> {
    const sub = this.subscription;
    this.subscription = null;
    this.replay.clear();
    if (!sub) return;
    try {
      await (await sub).cancel();
      this.logger.info('event stream: bus subscription given up');
    } catch {
      // never taken: nothing to give up
    }
  }
}
