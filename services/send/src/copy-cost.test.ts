import { copyCostBytes } from './copy-cost';

describe('copyCostBytes', () => {
  it('estimates a copy at about three times its stored request', () => {
    expect(copyCostBytes(10 * 1024 * 1024)).toBe(30 * 1024 * 1024 + 64 * 1024);
  });
});
