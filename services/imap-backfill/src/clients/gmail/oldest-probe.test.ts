import { oldestSecond } from './oldest-probe';

describe('oldestSecond', () => {
  const probeOver = (seconds: number[]) => {
    let calls = 0;
    const probe = async (s: number) => {
      calls++;
      return seconds.some((t) => t <= s);
    };
    return { probe, calls: () => calls };
  };

  it('finds the oldest second in about log2(now) probes', async () => {
    const now = 1_767_225_600;
    for (const oldest of [0, 1, 1_000_000_000, now - 1, now]) {
      const p = probeOver([oldest, oldest + 50, now]);
      expect(await oldestSecond(p.probe, now)).toBe(oldest);
      expect(p.calls()).toBeLessThanOrEqual(33);
    }
  });

  it('is null for an empty label', async () => {
    expect(await oldestSecond(probeOver([]).probe, 1_767_225_600)).toBeNull();
  });
});
