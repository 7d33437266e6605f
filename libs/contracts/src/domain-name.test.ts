import { normalizeDomainName } from './domain-name';

describe('normalizeDomainName', () => {
  it.each([
    ['Example.COM', 'example.com', 'example.com'],
    ['  mail.example.org. ', 'mail.example.org', 'mail.example.org'],
    ['bücher.example', 'xn--bcher-kva.example', 'bücher.example'],
    ['XN--BCHER-KVA.example', 'xn--bcher-kva.example', 'bücher.example'],
    ['日本語.jp', 'xn--wgv71a119e.jp', '日本語.jp'],
  ])('%s -> %s', (input, ascii, unicode) => {
    expect(normalizeDomainName(input)).toEqual({ ascii, unicode });
  });

  it.each([
    '',
    'localhost',
    '1.2.3.4',
    'a..b',
    '-a.com',
    'a-.com',
    'exa mple.com',
    'user@example.com',
    'http://x.com',
    'a_b.com',
    `${'a'.repeat(64)}.com`,
    `${'a.'.repeat(127)}com`,
    '*.example.com',
  ])('rejects %j', (input) => {
    expect(normalizeDomainName(input)).toBeNull();
  });
});
