/**
 * A set of UIDs (ids inside one folder) written the IMAP way (RFC 3501 sequence-set without `*`): `1:5,9,12:14`. Used
 * for what a job's checkpoint remembers (the UIDs of the slice in progress already handled:
 * hundreds of consecutive UIDs take a few bytes, so checkpoints stay small however large a
 * slice is) and for the UID list of a FETCH command. Pure.
 */

/** Ascending ranges, duplicates dropped: [9, 1, 2, 3, 5] -> "1:3,5,9". "" for none. */
export function toUidSet(uids: Iterable<number>): string {
  const sorted = [...new Set(uids)].filter((u) => Number.isInteger(u) && u > 0).sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}:${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** The UIDs of a set written by toUidSet; malformed parts are ignored. */
export function parseUidSet(set: string): number[] {
  const out: number[] = [];
  for (const part of set.split(',')) {
    const m = /^(\d+)(?::(\d+))?$/.exec(part.trim());
    if (!m) continue;
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    for (let u = Math.min(a, b); u <= Math.max(a, b); u++) if (u > 0) out.push(u);
  }
  return out;
}
