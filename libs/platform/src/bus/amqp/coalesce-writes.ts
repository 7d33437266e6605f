/**
 * One socket write per round of amqplib's frame multiplexer instead of one per frame.
 *
 * amqplib (0.10) queues each channel's frames and writes them to the socket in one
 * `setImmediate` round (`Mux#_readIncoming`), but with one `write()` per frame: a system call
 * per published message (and per ack, per confirm-channel method), which on loopback also runs
 * the broker side's TCP receive path in this process. The outbox relay publishes a whole batch in
 * one turn, so corking the socket for that round sends the batch in one `writev`: measured with
 * `bench/gateway/publish.ts`, 1.0 -> 0.05 write system calls per published message.
 *
 * Nothing else changes: the same bytes in the same order, the same back-pressure (`write()` still
 * reports a full buffer at the socket's high-water mark while corked, and the multiplexer then
 * waits for 'drain' as before), and the round's writes leave before it returns (uncork).
 *
 * This reaches into amqplib's internals (`ChannelModel#connection.muxer`); with an amqplib that
 * has none, the connection is left as it is and `false` is returned (its test then fails, so an
 * upgrade cannot drop the coalescing unnoticed).
 */
import type { ChannelModel } from 'amqplib';

interface Muxer {
  out: { cork(): void; uncork(): void };
  _readIncoming(): void;
}

export function coalesceFrameWrites(model: ChannelModel): boolean {
  const muxer = (model as unknown as { connection?: { muxer?: Partial<Muxer> } }).connection?.muxer;
  const out = muxer?.out;
  const read = muxer?._readIncoming;
  if (!muxer || typeof read !== 'function' || typeof out?.cork !== 'function') return false;
  // An own property: the multiplexer calls `this._readIncoming()` from its scheduled round and
  // from the socket's 'drain' listener alike.
  muxer._readIncoming = function readCorked(this: Muxer) {
    out.cork();
    try {
      read.call(this);
    } finally {
      out.uncork();
    }
  };
  return true;
}
