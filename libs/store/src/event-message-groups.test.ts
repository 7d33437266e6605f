import { messageGroups } from './event-message-groups';

describe('messageGroups', () => {
  it('puts events of one key together, in recorded order, groups ordered by their first event', () => {
    expect(messageGroups(['a', 'b', 'a', 'c', 'b', 'a'], 100)).toEqual([[0, 2, 5], [1, 4], [3]]);
  });

  it('starts a new group of the key when one is full', () => {
    expect(messageGroups(['a', 'a', 'b', 'a', 'a', 'a'], 2)).toEqual([[0, 1], [2], [3, 4], [5]]);
  });

  it('with 1 per message, every event is a message of its own', () => {
    expect(messageGroups(['a', 'a', 'b'], 1)).toEqual([[0], [1], [2]]);
  });

  it('refuses a size that is not a positive integer', () => {
    expect(() => messageGroups(['a'], 0)).toThrow(/positive integer/);
    expect(() => messageGroups(['a'], 1.5)).toThrow(/positive integer/);
  });
});
