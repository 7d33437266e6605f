import { addressKey, isDomainOrSubdomain, normalizeDomain, parseAddress } from './address';

describe('parseAddress (RFC 5322 addr-spec, IDNA domains)', () => {
  it.each([
    ['a@example.com', 'a@example.com'],
    ['First.Last+tag@Example.COM', 'First.Last+tag@example.com'],
    ["o'brien!#$%&*/=?^_`{|}~-@example.com", "o'brien!#$%&*/=?^_`{|}~-@example.com"],
    ['"john doe"@example.com', '"john doe"@example.com'],
    ['"a@b"@example.com', '"a@b"@example.com'],
    ['"quoted\\"pair"@example.com', '"quoted\\"pair"@example.com'],
    ['user@bücher.example', 'user@xn--bcher-kva.example'],
    ['user@xn--bcher-kva.example', 'user@xn--bcher-kva.example'],
    ['user@例え.テスト', 'user@xn--r8jz45g.xn--zckzah'],
    ['user@ｅｘａｍｐｌｅ.com', 'user@example.com'],
    ['user@sub-domain.a1.example', 'user@sub-domain.a1.example'],
    [`${'l'.repeat(64)}@example.com`, `${'l'.repeat(64)}@example.com`],
  ])('accepts %s as %s', (input, email) => {
    expect(parseAddress(input)?.email).toBe(email);
  });

  it.each([
    '',
    'plain',
    '@example.com',
    'a@',
    'a@@example.com',
    'a..b@example.com',
    '.a@example.com',
    'a.@example.com',
    'a b@example.com',
    'Name <a@example.com>',
    '"x>y"@example.com',
    '"<a>"@example.com',
    'a@example.com (comment)',
    ' a@example.com',
    'a@example.com ',
    'a@example.com\r\n',
    'a\r\n@example.com',
    '"a\r\nb"@example.com',
    'a@exa mple.com',
    'a@localhost',
    'a@127.0.0.1',
    'a@[127.0.0.1]',
    'a@-example.com',
    'a@example-.com',
    'a@example..com',
    'a@example.com.',
    'a@ex_ample.com',
    'a@ex%41mple.com',
    'a@example.com/path',
    'ü@example.com',
    `${'l'.repeat(65)}@example.com`,
    `a@${'d'.repeat(64)}.com`,
    `a@${Array.from({ length: 60 }, () => 'abcd').join('.')}.com`,
  ])('rejects %j', (input) => {
    expect(parseAddress(input)).toBeNull();
  });

  it('splits at the last @ and lowercases only the domain', () => {
    expect(parseAddress('"x@y"@Example.com')).toEqual({
      email: '"x@y"@example.com',
      local: '"x@y"',
      domain: 'example.com',
    });
    expect(addressKey('Mixed@example.com')).toBe('mixed@example.com');
  });
});

describe('normalizeDomain / isDomainOrSubdomain', () => {
  it('normalizes to lowercase ASCII', () => {
    expect(normalizeDomain('Bücher.Example')).toBe('xn--bcher-kva.example');
    expect(normalizeDomain('a。b')).toBe('a.b');
    expect(normalizeDomain('single')).toBeNull();
  });

  it('matches the domain and its subdomains only', () => {
    expect(isDomainOrSubdomain('example.com', 'example.com')).toBe(true);
    expect(isDomainOrSubdomain('mail.example.com', 'Example.com')).toBe(true);
    expect(isDomainOrSubdomain('notexample.com', 'example.com')).toBe(false);
    expect(isDomainOrSubdomain('example.com.evil.test', 'example.com')).toBe(false);
  });
});

describe('normalizeDomain remembers recent answers', () => {
  const cases: Array<[string, string | null]> = [
    ['Bücher.Example', 'xn--bcher-kva.example'],
    ['example.com', 'example.com'],
    ['EXAMPLE.com', 'example.com'],
    ['localhost', null],
    ['1.2.3.4', null],
    ['-bad.example', null],
    ['', null],
    [`${'a'.repeat(300)}.com`, null],
  ];

  it('answers the same the first time, again, and after more domains than it keeps', () => {
    for (const [raw, want] of cases) expect([raw, normalizeDomain(raw)]).toEqual([raw, want]);
    for (const [raw, want] of cases) expect([raw, normalizeDomain(raw)]).toEqual([raw, want]);
    for (let i = 0; i < 2500; i++) expect(normalizeDomain(`d${i}.Example.org`)).toBe(`d${i}.example.org`);
    for (const [raw, want] of cases) expect([raw, normalizeDomain(raw)]).toEqual([raw, want]);
  });

  it('still refuses what is not a string', () => {
    expect(normalizeDomain(42 as unknown as string)).toBeNull();
    expect(normalizeDomain(undefined as unknown as string)).toBeNull();
  });
});
