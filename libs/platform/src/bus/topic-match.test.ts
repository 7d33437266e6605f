import { topicMatches } from './topic-match';

describe('topicMatches', () => {
  it.each([
    ['email.delivered', 'email.delivered'],
    ['email.*', 'email.delivered'],
    ['*.delivered', 'email.delivered'],
    ['*.*', 'email.delivered'],
    ['email.#', 'email'],
    ['email.#', 'email.delivered'],
    ['email.#', 'email.bounce.hard'],
    ['#', ''],
    ['#', 'email'],
    ['#', 'a.b.c.d'],
    ['#.hard', 'hard'],
    ['#.hard', 'email.bounce.hard'],
    ['email.#.hard', 'email.hard'],
    ['email.#.hard', 'email.bounce.soft.hard'],
    ['#.*', 'email'],
    ['*.#', 'email.a.b'],
    ['#.#', ''],
    ['a.*.#.c', 'a.b.c'],
    ['a.*.#.c', 'a.b.x.y.c'],
    ['', ''],
    ['a..b', 'a..b'],
    ['a.*.b', 'a..b'],
  ])('%j matches %j', (pattern, key) => {
    expect(topicMatches(pattern, key)).toBe(true);
  });

  it.each([
    ['email.delivered', 'email.bounce'],
    ['email.delivered', 'email.delivered.x'],
    ['email.*', 'email'],
    ['email.*', 'email.bounce.hard'],
    ['*', ''],
    ['*', 'a.b'],
    ['*.*', 'email'],
    ['email.#', 'emails.delivered'],
    ['email.#', 'domain.email'],
    ['#.hard', 'email.hard.x'],
    ['email.#.hard', 'email.bounce.soft'],
    ['a.*.#.c', 'a.c'],
    ['#.*', ''],
    ['', 'a'],
    ['email', 'EMAIL'],
  ])('%j does not match %j', (pattern, key) => {
    expect(topicMatches(pattern, key)).toBe(false);
  });
});
