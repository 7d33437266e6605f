/** The duration settings field: a number and s, m, h or d, read as milliseconds; anything else is refused. */
import { z } from 'zod';
import { ConfigError, parseSettings } from './env';
import { duration } from './fields';

const schema = z.object({ KEEP: duration('30d') });
const read = (v?: string) => parseSettings(schema, v === undefined ? {} : { KEEP: v }).KEEP;

it.each([
  ['15s', 15_000],
  ['1s', 1_000],
  ['30m', 1_800_000],
  ['1.5h', 5_400_000],
  ['7d', 604_800_000],
  [' 2H ', 7_200_000],
])('%s is %d ms', (v, ms) => {
  expect(read(v)).toBe(ms);
});

it('defaults to its fallback, written the same way', () => {
  expect(read()).toBe(30 * 86_400_000);
  expect(read('')).toBe(30 * 86_400_000);
});

it.each(['30', '10x', 'd', '-1d', '0s', '0.5s', '1w', '1 d d', '99999999d'])(
  'refuses %j with the expected form',
  (v) => {
    expect(() => read(v)).toThrow(ConfigError);
    expect(() => read(v)).toThrow(/KEEP must be a duration such as 15s, 30m, 1h or 30d/);
  },
);
