import { parseAddSuppressions, parseSuppressionsQuery, suppressionKey } from './suppressions';

describe('suppression addresses', () => {
  it('keys an address: lowercase, ASCII domain; null for what is not a bare address', () => {
    expect(suppressionKey('Jane+News@Example.ORG')).toBe('jane+news@example.org');
    expect(suppressionKey('Max@Bücher.Example')).toBe('max@xn--bcher-kva.example');
    for (const bad of [
      '',
      'nope',
      'Jane <jane@example.org>',
      'a@x.test\r\nBcc: b@y.test',
      `${'a'.repeat(65)}@x.test`,
    ])
      expect(suppressionKey(bad)).toBeNull();
  });
});

describe('POST /v1/suppressions body', () => {
  it('keys and deduplicates the addresses; reason defaults to manual', () => {
    expect(parseAddSuppressions({ emails: ['A@x.test', 'a@X.test', 'b@x.test'] })).toEqual({
      success: true,
      data: { emails: ['a@x.test', 'b@x.test'], reason: 'manual' },
    });
    expect(parseAddSuppressions({ emails: ['a@x.test'], reason: 'hard_bounce' })).toMatchObject({
      data: { reason: 'hard_bounce' },
    });
  });

  it.each([
    [undefined, 'emails is required'],
    [{}, 'emails is required'],
    [{ emails: null }, 'emails must be an array'],
    [{ emails: [] }, 'emails must hold 1 to 1000 addresses'],
    [
      { emails: Array.from({ length: 1001 }, (_, i) => `u${i}@x.test`) },
      'emails must hold 1 to 1000 addresses',
    ],
    [{ emails: ['a@x.test', 'b'] }, 'emails[1] must be a valid email address'],
    [{ emails: [{}] }, 'emails[0] must be a string'],
    [
      { emails: ['a@x.test'], reason: 'unsubscribed' },
      'reason must be one of unsubscribe, hard_bounce, spam_complaint, manual',
    ],
  ])('%j -> "%s"', (body, error) => {
    expect(parseAddSuppressions(body)).toEqual({ success: false, error });
  });

  it('accepts exactly 1000 addresses', () => {
    const emails = Array.from({ length: 1000 }, (_, i) => `u${i}@x.test`);
    expect(parseAddSuppressions({ emails })).toMatchObject({ success: true });
  });
});

describe('GET /v1/suppressions query', () => {
  it('lowercases the email part, drops empty parameters, defaults the page size', () => {
    expect(parseSuppressionsQuery({ email: 'Jane@', reason: '', pageToken: '' })).toEqual({
      success: true,
      data: { email: 'jane@', pageSize: 20 },
    });
  });

  it.each([
    [{ reason: 'bored' }, 'reason must be one of unsubscribe, hard_bounce, spam_complaint, manual'],
    [{ email: 'a\nb' }, 'email must not contain control characters'],
    [{ email: 'x'.repeat(255) }, 'email must be at most 254 characters'],
    [{ pageSize: '51' }, 'pageSize must be an integer between 1 and 50'],
    [{ email: ['a', 'b'] }, 'email must be a string'],
  ])('%j -> "%s"', (query, error) => {
    expect(parseSuppressionsQuery(query)).toEqual({ success: false, error });
  });
});
