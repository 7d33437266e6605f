import {
  childTraceparent,
  currentTrace,
  isValidTraceparent,
  runWithTrace,
  traceIdOf,
  traceparentOfUlid,
} from './context';

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

describe('traceparentOfUlid', () => {
  it('takes the ULID bits as the trace id, a new span each time', () => {
    const a = traceparentOfUlid('01ARZ3NDEKTSV4RRFFQ69G5FAV');
    const b = traceparentOfUlid('01arz3ndektsv4rrffq69g5fav');
    expect(isValidTraceparent(a)).toBe(true);
    // 01ARZ3NDEKTSV4RRFFQ69G5FAV = 0x01563e3ab5d3d6764c61efb99302bd5b (ulid spec example)
    expect(traceIdOf(a)).toBe('01563e3ab5d3d6764c61efb99302bd5b');
    expect(traceIdOf(b)).toBe(traceIdOf(a));
    expect(a.split('-')[2]).not.toBe(b.split('-')[2]);
    expect(traceIdOf(traceparentOfUlid('7ZZZZZZZZZZZZZZZZZZZZZZZZZ'))).toBe('f'.repeat(32));
  });

  it('starts a random trace for what is not a ULID (or is all zeros)', () => {
    for (const bad of [
      '',
      'inmsg_01ARZ3NDEKTSV4RRFFQ69G5FAV',
      '8ZZZZZZZZZZZZZZZZZZZZZZZZZ',
      '0'.repeat(26),
    ]) {
      const t = traceparentOfUlid(bad);
      expect(isValidTraceparent(t)).toBe(true);
      expect(traceIdOf(t)).not.toBe('0'.repeat(32));
    }
  });
});
