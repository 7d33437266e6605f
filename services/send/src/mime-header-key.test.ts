import MimeNode from 'nodemailer/lib/mime-node';
import { MAX_CACHED_KEYS, memoizeHeaderKeys } from './mime-header-key';

type Normalize = (key: unknown) => string;
const proto = MimeNode.prototype as unknown as { _normalizeHeaderKey: Normalize };

const names = [
  'content-type',
  'Content-Type',
  'mime-version',
  'x-smtpapi',
  'dkim-signature',
  'arc-seal',
  'bimi-selector',
  'otp-token',
  'received-spf',
  'x-fbl',
  'content-md5',
  'message-id',
  'content-features',
  'From: ceo@example.com (',
  'x\u0000odd\u007fname:',
  '',
];

describe('memoizeHeaderKeys', () => {
  it("gives nodemailer's own normalized names, cached or not", () => {
    const original = proto._normalizeHeaderKey;
    const expected = names.map((n) => original.call(null, n));
    memoizeHeaderKeys();
    expect(proto._normalizeHeaderKey).not.toBe(original);
    // Twice: the first call fills the cache, the second reads it.
    for (let round = 0; round < 2; round++)
      expect(names.map((n) => proto._normalizeHeaderKey(n))).toEqual(expected);
    expect(proto._normalizeHeaderKey(undefined)).toBe(original.call(null, undefined));
    expect(proto._normalizeHeaderKey(42)).toBe('42');
    // Past the bound, names are still normalized (just not kept).
    const many = Array.from({ length: MAX_CACHED_KEYS + 50 }, (_, i) => `x-custom-header-${i}`);
    for (const n of many) expect(proto._normalizeHeaderKey(n)).toBe(original.call(null, n));
    memoizeHeaderKeys();
    expect(proto._normalizeHeaderKey('content-type')).toBe('Content-Type');
  });

  it('builds the same message with the cache as without', async () => {
    const build = async () => {
      const node = new MimeNode('text/plain', { baseBoundary: 'fixed' });
      node.setHeader({ from: 'a@example.com', 'x-custom-thing': 'v', 'mime-version': '1.0' });
      node.setHeader('date', 'Sun, 01 Mar 2026 10:00:00 +0000');
      node.setHeader('message-id', '<m@example.com>');
      node.setContent('hello');
      return (await node.build()).toString();
    };
    const text = await build();
    expect(text).toContain('X-Custom-Thing: v');
    expect(text).toContain('MIME-Version: 1.0');
    expect(text).toContain('Message-ID: <m@example.com>');
  });
});
