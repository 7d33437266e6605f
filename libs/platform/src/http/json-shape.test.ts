import { JsonShapeScanner } from './json-shape';

const scan = (text: string | string[], maxDepth = 4, maxValues = 10) => {
  const s = new JsonShapeScanner(maxDepth, maxValues);
  for (const chunk of Array.isArray(text) ? text : [text]) {
    const problem = s.feed(Buffer.from(chunk));
    if (problem) return problem;
  }
  return null;
};

describe('JsonShapeScanner', () => {
  it('passes bodies within the limits', () => {
    expect(scan('{"a":[1,2,{"b":[3]}]}')).toBeNull();
    expect(scan('"just a string"')).toBeNull();
    expect(scan('[[[[1]]]]')).toBeNull();
  });

  it('refuses nesting past maxDepth', () => {
    expect(scan('[[[[[1]]]]]')).toBe('depth');
    expect(scan('{"a":{"b":{"c":{"d":{}}}}}')).toBe('depth');
  });

  it('refuses more values than maxValues', () => {
    // The array and its 9 elements: 10 values.
    expect(scan(`[${'0,'.repeat(8)}0]`)).toBeNull();
    expect(scan(`[${'0,'.repeat(9)}0]`)).toBe('values');
    expect(scan(`[${'{},'.repeat(20)}{}]`)).toBe('values');
  });

  it('ignores brackets, commas and escaped quotes inside strings', () => {
    expect(scan(`["${'[[[[[,,,,,,,,,,,'.repeat(3)}"]`)).toBeNull();
    expect(scan('["a\\"[[[[[[[[", "\\\\", "x"]')).toBeNull();
    expect(scan('["a\\\\"[[[[[[]]]]]]]')).toBe('depth');
  });

  it('keeps its state across chunk boundaries, also inside an escape', () => {
    expect(scan(['["ab\\', '"[[[[[[[[[", 1]'])).toBeNull();
    expect(scan(['["ab', 'c"', ',[[', '[[[1]]]]]]'])).toBe('depth');
    expect(scan(['[0,0,0,0,', '0,0,0,0,', '0,0,0]'])).toBe('values');
  });

  it('scans many small strings in one chunk (positions found once per chunk, not per string)', () => {
    // A rescan of the chunk per string would be 200k x 1 MB: far beyond the test timeout.
    const body = `[${'"x",'.repeat(200_000)}"x"]`;
    expect(scan(body, 4, 1_000_000)).toBeNull();
    expect(scan(`${body.slice(0, -1)},[[[[[1]]]]]]`, 4, 1_000_000)).toBe('depth');
  });
});
