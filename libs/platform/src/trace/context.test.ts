import { childTraceparent, currentTrace, isValidTraceparent, runWithTrace, traceIdOf } from './context';

describe('trace context', () => {
  const parent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

  it('continues a valid parent trace with a new span', () => {
    const child = childTraceparent(parent);
    expect(traceIdOf(child)).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(child).not.toBe(parent);
    expect(isValidTraceparent(child)).toBe(true);
  });

  it('starts a new trace for missing or invalid parents', () => {
    for (const bad of [undefined, 'garbage', '00-00000000000000000000000000000000-00f067aa0ba902b7-01']) {
      const t = childTraceparent(bad);
      expect(isValidTraceparent(t)).toBe(true);
      expect(traceIdOf(t)).not.toBe('00000000000000000000000000000000');
    }
  });

  it('draws a fresh trace and span id every time', () => {
    const made = Array.from({ length: 2000 }, () => childTraceparent());
    for (const t of made) expect(isValidTraceparent(t)).toBe(true);
    expect(new Set(made.map(traceIdOf)).size).toBe(made.length);
    expect(new Set(made.map((t) => t.split('-')[2])).size).toBe(made.length);
    const children = Array.from({ length: 2000 }, () => childTraceparent(parent));
    expect(new Set(children).size).toBe(children.length);
  });

  it('keeps the context across awaits', async () => {
    await runWithTrace({ traceparent: parent, requestId: 'r1' }, async () => {
      await new Promise((r) => setTimeout(r, 1));
      expect(currentTrace()?.requestId).toBe('r1');
    });
    expect(currentTrace()).toBeUndefined();
  });
});
