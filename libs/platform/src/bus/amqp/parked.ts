import { parkedMessage } from '../delivery';
import type { ParkedMessage } from '../types';
import type { Link } from './connection';
import { parkedReason } from './message';
import { assertParkingQueue } from './topology';

/** Reads `<queue>.parking` on a channel of its own; removes what it read when `drain` is true. */
export async function readParked(link: Link, queue: string, drain: boolean): Promise<ParkedMessage[]> {
  const ch = await link.model.createChannel();
  ch.on('error', () => {});
  try {
    const name = await assertParkingQueue(ch, queue);
    const out: ParkedMessage[] = [];
    for (;;) {
      const msg = await ch.get(name, { noAck: false });
      if (!msg) break;
      out.push(parkedMessage(msg.content.toString('utf8'), parkedReason(msg), msg.properties.messageId));
    }
    // Unacked messages go back to the queue, in order, when not draining.
    if (drain) ch.ackAll();
    else ch.nackAll(true);
    return out;
  } finally {
    await ch.close().catch(() => {});
  }
}
