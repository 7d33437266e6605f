import { gmailListParams, inGmailWindow } from './gmail-query';

const since = new Date('2024-01-01T00:00:00Z');
const until = new Date('2024-01-31T23:59:59Z');

describe('gmailListParams', () => {
  it('widens the window by a second on each side, in epoch seconds', () => {
    expect(gmailListParams({ since, until })).toEqual({
      q: `after:${since.getTime() / 1000 - 1} before:${until.getTime() / 1000 + 1}`,
      includeSpamTrash: false,
    });
  });

  it('drops sub-second parts of the bounds', () => {
    const p = gmailListParams({ since: new Date('2024-01-01T00:00:00.900Z') });
    expect(p.q).toBe(`after:${since.getTime() / 1000 - 1}`);
  });

  it('matches a participant with from: OR to: (the spec), no cc:', () => {
    expect(gmailListParams({ participant: ' ann@example.com ' }).q).toBe(
      '{from:ann@example.com to:ann@example.com}',
    );
  });

  it('lists a label, with spam and trash included only for those labels', () => {
    expect(gmailListParams({ labelId: 'INBOX' })).toEqual({ labelIds: ['INBOX'], includeSpamTrash: false });
    expect(gmailListParams({ labelId: 'SPAM' })).toEqual({ labelIds: ['SPAM'], includeSpamTrash: true });
    expect(gmailListParams({ labelId: 'TRASH' }).includeSpamTrash).toBe(true);
    expect(gmailListParams({})).toEqual({ includeSpamTrash: false });
  });

  it('refuses a participant that would change the query', () => {
    for (const bad of ['a b@x.com', 'a@x.com} OR {from:b@y.com', '"a"@x.com', 'nobody', 'a@b@c']) {
      expect(() => gmailListParams({ participant: bad })).toThrow(TypeError);
    }
  });
});

describe('inGmailWindow', () => {
  it('keeps the inclusive window in whole seconds', () => {
    expect(inGmailWindow(since, { since, until })).toBe(true);
    expect(inGmailWindow(new Date('2024-01-31T23:59:59.999Z'), { since, until })).toBe(true);
    expect(inGmailWindow(new Date(since.getTime() - 1), { since, until })).toBe(false);
    expect(inGmailWindow(new Date(until.getTime() + 1000), { since, until })).toBe(false);
    expect(inGmailWindow(new Date(0), {})).toBe(true);
  });
});
