/**
 * Which acks one consumer channel sends for the messages it finished: instead of one basic.ack
 * per message, the messages whose work is done when a flush runs (once per event-loop turn, see
 * AmqpConsumer) are acked together:
 * - the run of finished messages from the oldest one received (no message still being handled
 *   before it) by ONE basic.ack with `multiple` set, naming the newest of them;
 * - finished messages after a message still being handled one by one (a `multiple` ack would
 *   ack the unfinished one too), so a slow message never holds the others' prefetch slots.
 *
 * At-least-once is unchanged: a message is acked only after its handler finished (its work is
 * durable); a crash or a lost channel before the flush leaves it unacked and the broker
 * redelivers it, as it would have a message whose single ack was lost. Messages settled another
 * way (nacked, requeued) are forgotten: `multiple` acks only cover messages still unacked, and a
 * flush never names a tag that is no longer outstanding (RabbitMQ closes the channel for an
 * unknown tag).
 *
 * Pure bookkeeping (tags in, acks out); the consumer sends them. Delivery tags of a channel
 * increase in the order the broker delivers, which is the order of `received` calls.
 */
export interface AckFrame {
  tag: number;
  /** Acks every unacked message of the channel up to and including `tag`. */
  multiple: boolean;
}

export class AckWindow {
  /** Received and not yet acked or forgotten, in delivery order: false while being handled. */
  private readonly open = new Map<number, boolean>();
  private finished = 0;

  /** A message was delivered (before its handler runs). */
  received(tag: number): void {
    this.open.set(tag, false);
  }

  /** Its work is done: ack it at the next flush. */
  done(tag: number): void {
    if (this.open.get(tag) === false) {
      this.open.set(tag, true);
      this.finished++;
    }
  }

  /** Settled without an ack (nacked by the caller): never named by an ack. */
  forget(tag: number): void {
    if (this.open.get(tag) === true) this.finished--;
    this.open.delete(tag);
  }

  /** Whether a flush would send anything. */
  get pending(): boolean {
    return this.finished > 0;
  }

  /** The acks for every finished message, which are forgotten here. */
  flush(): AckFrame[] {
    const frames: AckFrame[] = [];
    let left = this.finished;
    let newest = -1;
    let run = 0;
    let blocked = false;
    for (const [tag, isDone] of this.open) {
      if (left === 0) break;
      if (!isDone) {
        blocked = true;
        continue;
      }
      left--;
      this.open.delete(tag);
      if (blocked) frames.push({ tag, multiple: false });
      else {
        newest = tag;
        run++;
      }
    }
    if (run > 0) frames.unshift({ tag: newest, multiple: run > 1 });
    this.finished = 0;
    return frames;
  }
}
