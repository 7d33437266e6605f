/**
 * Posts the messages of one folder as they stream from the mailbox, without a round trip per
 * message: up to `inFlight` messages are turned into payloads at once (parsing waits on stream
 * ticks, so one at a time would leave the CPU idle), each payload is published at once and its
 * broker confirm collected; every `checkpointEvery` messages a checkpoint waits for the confirms
 * it covers and then records the handled message ids (`save`), in the background while the next
 * messages stream in. Checkpoints run one at a time and in order; a checkpoint never records an
 * id before the broker confirmed its post (at-least-once). Memory is bounded in bytes as well
 * as in messages: a message's source size stays counted against `inFlightBytes` from `add`
 * until its post is confirmed (its payload, about as large, is held until then), and `add` waits
 * while the sum would exceed it; a single message larger than the budget goes through alone.
 * Beside that at most `inFlight` messages are being built and two checkpoints' worth of
 * confirms are awaited.
 *
 * `build` returns null for a message that is handled without a post (the service's own sent
 * mail). `save` returns false when the job is no longer this worker's (cancelled, lease lost):
 * `stopped` turns true and the caller stops feeding. The first error (a failed publish or
 * save) is thrown by the next `add` or by `drain`.
 */
import type { RawMessage } from '../mailbox/mailbox-client';

export interface PostPipelineOptions {
  inFlight: number;
  /** Source bytes of the messages taken and not yet confirmed (default: unbounded). */
  inFlightBytes?: number;
  checkpointEvery: number;
  build(msg: RawMessage): Promise<Record<string, unknown> | null>;
  /** Publishes; resolves once the broker confirmed. */
  post(body: Record<string, unknown>): Promise<void>;
  /** Records handled message ids (`posted` of them were posted); false = stop. */
  save(ids: string[], posted: number): Promise<boolean>;
}

interface Handled {
  id: string;
  confirm: Promise<void> | null;
}

export class PostPipeline {
  private readonly building = new Set<Promise<void>>();
  private pending: Handled[] = [];
  /** The latest checkpoint (each one waits for the one before it). */
  private saving: Promise<void> = Promise.resolve();
  private failure: { error: unknown } | null = null;
  private halted = false;
  /** Source bytes taken and not yet settled, and who waits for some to be released. */
  private bytes = 0;
  private released: (() => void) | null = null;

  constructor(private readonly o: PostPipelineOptions) {}

  /** True once a checkpoint found the job gone; feed no more. */
  get stopped(): boolean {
    return this.halted;
  }

  /** Takes one message; waits while `inFlight` are being built or a checkpoint backlog builds up. */
  async add(msg: RawMessage): Promise<void> {
    this.rethrow();
    while (this.building.size >= this.o.inFlight) await Promise.race(this.building);
    const size = msg.source.length;
    const budget = this.o.inFlightBytes ?? Number.POSITIVE_INFINITY;
    while (this.bytes > 0 && this.bytes + size > budget && !this.failure)
      await new Promise<void>((resolve) => {
        this.released = resolve;
      });
    this.rethrow();
    this.bytes += size;
    const task: Promise<void> = this.handle(msg, size)
      .catch((error) => this.fail(error))
      .finally(() => this.building.delete(task));
    this.building.add(task);
    if (this.pending.length >= this.o.checkpointEvery) {
      // The previous checkpoint must be done first: at most one more checkpoint's worth queues up.
      await this.saving;
      if (this.pending.length >= this.o.checkpointEvery) this.checkpoint();
    }
    this.rethrow();
  }

  /** Waits until every message taken is posted, confirmed and checkpointed. */
  async drain(): Promise<void> {
    while (this.building.size > 0) await Promise.allSettled([...this.building]);
    if (this.pending.length > 0) this.checkpoint();
    await this.saving;
    this.rethrow();
  }

  /** Source bytes of the messages taken and not confirmed yet. */
  get heldBytes(): number {
    return this.bytes;
  }

  private async handle(msg: RawMessage, size: number): Promise<void> {
    const id = msg.id;
    let body: Record<string, unknown> | null;
    try {
      body = await this.o.build(msg);
    } catch (error) {
      this.release(size);
      throw error;
    }
    let confirm: Promise<void> | null = null;
    if (body) {
      confirm = this.o.post(body);
      // Released when settled; awaited (and its error thrown) by the checkpoint that covers it.
      confirm.then(
        () => this.release(size),
        () => this.release(size),
      );
    } else this.release(size);
    this.pending.push({ id, confirm });
  }

  private release(size: number): void {
    this.bytes -= size;
    const wake = this.released;
    this.released = null;
    wake?.();
  }

  private checkpoint(): void {
    const batch = this.pending;
    this.pending = [];
    const previous = this.saving;
    this.saving = (async () => {
      await previous;
      if (this.failure || this.halted) return;
      try {
        await Promise.all(batch.map((h) => h.confirm));
        const posted = batch.filter((h) => h.confirm).length;
        if (
          !(await this.o.save(
            batch.map((h) => h.id),
            posted,
          ))
        )
          this.halted = true;
      } catch (error) {
        this.fail(error);
      }
    })();
  }

  private fail(error: unknown): void {
    this.failure ??= { error };
    const wake = this.released;
    this.released = null;
    wake?.();
  }

  private rethrow(): void {
    if (this.failure) throw this.failure.error;
  }
}
