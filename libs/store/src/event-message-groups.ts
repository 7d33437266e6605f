/**
 * Which recorded email events share one bus message (libs/contracts email-event-message.ts,
 * version 2): events with the same key (tenant and event type, so one envelope tenant and one
 * routing key serve them all), at most `max` per message, in the order they were recorded.
 * Pure: keys in, groups of indexes out; groups come in the order of their first member.
 */
export function messageGroups(keys: readonly string[], max: number): number[][] {
  if (!Number.isInteger(max) || max < 1)
    throw new Error(`events per message must be a positive integer (got ${max})`);
  const open = new Map<string, number[]>();
  const groups: number[][] = [];
  keys.forEach((key, i) => {
    let group = open.get(key);
    if (!group || group.length >= max) {
      group = [];
      open.set(key, group);
      groups.push(group);
    }
    group.push(i);
  });
  return groups;
}
