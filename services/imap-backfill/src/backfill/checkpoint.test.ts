import { readCheckpoint, writeCheckpoint } from './checkpoint';

describe('job checkpoints', () => {
  it('round-trip, with the handled UIDs as a compact UID set', () => {
    const cp = readCheckpoint({});
    expect(cp).toEqual({ lower: null, until: null, folders: {}, started: false, step: 0 });
    cp.lower = '2026-01-01T00:00:00.000Z';
    cp.until = '2026-02-01T00:00:00.000Z';
    cp.started = true;
    cp.step = 3;
    cp.folders.inbox = { uidValidity: '42', delivered: new Set([5, 1, 2, 3, 9]) };
    const stored = writeCheckpoint(cp);
    expect(stored).toEqual({
      lower: cp.lower,
      until: cp.until,
      folders: { inbox: { uidValidity: '42', done: '1:3,5,9' } },
      started: true,
      step: 3,
    });
    const back = readCheckpoint(JSON.parse(JSON.stringify(stored)));
    expect([...back.folders.inbox!.delivered].sort((a, b) => a - b)).toEqual([1, 2, 3, 5, 9]);
    expect(back.folders.inbox!.uidValidity).toBe('42');
  });

  it('reads checkpoints of the earlier layout (UID arrays) and ignores malformed folders', () => {
    const cp = readCheckpoint({
      until: '2026-02-01T00:00:00.000Z',
      folders: { sent: { uidValidity: '7', delivered: [3, 4, 'x'] }, spam: { delivered: [1] } },
      started: true,
      step: 1,
    });
    expect(cp.folders.sent).toEqual({ uidValidity: '7', delivered: new Set([3, 4]) });
    expect(cp.folders.spam).toBeUndefined();
  });
});
