import { AckWindow } from './ack-window';

function windowOf(tags: number[]): AckWindow {
  const w = new AckWindow();
  for (const t of tags) w.received(t);
  return w;
}

describe('AckWindow', () => {
  it('acks a run of finished messages from the oldest one with one multiple ack', () => {
    const w = windowOf([1, 2, 3, 4]);
    for (const t of [3, 1, 2]) w.done(t);
    expect(w.flush()).toEqual([{ tag: 3, multiple: true }]);
    expect(w.pending).toBe(false);
    w.done(4);
    expect(w.flush()).toEqual([{ tag: 4, multiple: false }]);
  });

  it('acks finished messages after one still being handled one by one, never past it', () => {
    const w = windowOf([1, 2, 3, 4, 5]);
    for (const t of [1, 2, 4, 5]) w.done(t);
    expect(w.flush()).toEqual([
      { tag: 2, multiple: true },
      { tag: 4, multiple: false },
      { tag: 5, multiple: false },
    ]);
    // The slow one finishes: only it is left to ack (4 and 5 are no longer outstanding).
    w.done(3);
    expect(w.flush()).toEqual([{ tag: 3, multiple: false }]);
    expect(w.flush()).toEqual([]);
  });

  it('never names a tag twice and forgets messages settled without an ack (nacked)', () => {
    const w = windowOf([7, 8, 9, 10]);
    w.forget(8);
    w.done(7);
    w.done(9);
    // 8 is no longer outstanding on the channel: a multiple ack of 9 covers 7 and 9 only.
    expect(w.flush()).toEqual([{ tag: 9, multiple: true }]);
    w.done(9);
    w.done(7);
    expect(w.flush()).toEqual([]);
    w.done(10);
    w.forget(10);
    expect(w.pending).toBe(false);
    expect(w.flush()).toEqual([]);
  });

  it('holds nothing back for a message whose handler never finished', () => {
    const w = windowOf([1, 2, 3]);
    w.done(2);
    w.done(3);
    expect(w.flush()).toEqual([
      { tag: 2, multiple: false },
      { tag: 3, multiple: false },
    ]);
    w.received(4);
    w.done(4);
    expect(w.flush()).toEqual([{ tag: 4, multiple: false }]);
  });
});
