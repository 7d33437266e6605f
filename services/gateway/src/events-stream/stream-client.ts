/**
 * One connected event-stream client: its tenant, its filters and its response. Writes never
 * wait: what the socket has not taken yet stays in the response's own buffer, and once that
 * passes `maxBufferedBytes` (a client that stopped reading) the client is disconnected instead
 * of buffering without bound. So one slow client never holds up the others or the bus.
 */
import type { ServerResponse } from 'node:http';
import type { EventStreamQuery } from '@mailyard/contracts';

export class StreamClient {
  private closed = false;

  constructor(
    readonly tenantId: string,
    readonly filter: EventStreamQuery,
    private readonly res: ServerResponse,
    private readonly maxBufferedBytes: number,
    /** Called once when the gateway drops the client for slowness. */
    private readonly onSlow: (client: StreamClient) => void,
  ) {}

  get open(): boolean {
    return !this.closed;
  }

  /** Writes one frame (or comment); false when the client is gone or was dropped now. */
  send(frame: string): boolean {
    if (this.closed) return false;
    if (this.res.write(frame) || this.res.writableLength <= this.maxBufferedBytes) return true;
    this.closed = true;
    this.res.destroy();
    this.onSlow(this);
    return false;
  }

  /** Ends the response (server shutdown); the client may reconnect elsewhere. */
  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.res.end();
  }

  /** The connection closed (by the client or after end/destroy). */
  markClosed(): void {
    this.closed = true;
  }
}
