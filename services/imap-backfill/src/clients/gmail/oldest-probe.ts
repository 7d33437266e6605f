/**
 * The oldest message of a Gmail label without listing them all: Gmail lists newest first only,
 * so the second of the oldest receipt time is found by bisection over "is there any message
 * received at or before second s" (`before:` queries, one list call each): about 31 calls
 * for any mailbox size. Gmail does not say whether `before:` is inclusive; the query builder asks
 * one second wider, so the answer may be a second early, never late (a window's lower bound may
 * be early, the walk filters exact times). Pure: the probe is passed in.
 */
export async function oldestSecond(
  anyAtOrBefore: (second: number) => Promise<boolean>,
  nowSecond: number,
): Promise<number | null> {
  if (!(await anyAtOrBefore(nowSecond))) return null;
  let lo = -1; // nothing at or before lo (receipt times are not before the epoch)
  let hi = nowSecond; // something at or before hi
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (await anyAtOrBefore(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}
