import { tuneHeap } from './heap-tuning';

describe('tuneHeap', () => {
  it('leaves a growing factor given to node alone (command line or NODE_OPTIONS)', () => {
    expect(tuneHeap(['--heap-growing-percent=20'], '')).toBe(false);
    expect(tuneHeap([], '--max-semi-space-size=2 --heap-growing-percent=0')).toBe(false);
  });

  it('sets it otherwise', () => {
    expect(tuneHeap(['--enable-source-maps'], '--max-semi-space-size=2')).toBe(true);
  });
});
