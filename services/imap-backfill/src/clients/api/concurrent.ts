/**
 * Bounded concurrency for the API mailboxes (Gmail API, Graph have no FETCH of many messages in
 * one command): `fn` runs for up to `limit` items at once and results are yielded as they come
 * (any order), one at a time; a null result is left out (a message deleted meanwhile). The next
 * request starts while the consumer handles a result, so memory holds at most `limit + 1`
 * results. The first error is thrown to the consumer; when the consumer stops early or an error
 * ends the walk, the requests in flight are let finish and their results dropped.
 */
export async function* mapConcurrent<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R | null>,
): AsyncGenerator<R> {
  type Settled = { key: number; ok: true; value: R | null } | { key: number; ok: false; error: unknown };
  const running = new Map<number, Promise<Settled>>();
  let next = 0;
  const launch = () => {
    while (running.size < Math.max(1, limit) && next < items.length) {
      const key = next++;
      running.set(
        key,
        fn(items[key]!).then(
          (value): Settled => ({ key, ok: true, value }),
          (error: unknown): Settled => ({ key, ok: false, error }),
        ),
      );
    }
  };
  try {
    launch();
    while (running.size > 0) {
      const done = await Promise.race(running.values());
      running.delete(done.key);
      if (!done.ok) throw done.error;
      launch();
      if (done.value !== null) yield done.value;
    }
  } finally {
    await Promise.allSettled(running.values());
  }
}
