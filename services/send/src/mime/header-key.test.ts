import MimeNode from 'nodemailer/lib/mime-node';
import { MAX_CACHED_KEYS, normalizeHeaderKey } from './header-key';

/** The name nodemailer writes for a header set under `name` (through its public API). */
function nodemailerKey(name: string): string {
  // A child node: the root would add Date, Message-ID and MIME-Version of its own.
  const node = new MimeNode().createChild(false);
  node.setHeader(name, 'v');
  const line = node.buildHeaders();
  return line.slice(0, line.indexOf(':'));
}

const names = [
  'content-type',
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
  'list-unsubscribe-post',
  'X-CAMPAIGN',
  'x-is-svc',
  'x\u0000odd\u007fname',
];

describe('normalizeHeaderKey', () => {
  it("gives nodemailer's own header names, cached or not", () => {
    const expected = names.map(nodemailerKey);
    // Twice: the first call fills the cache, the second reads it.
    for (let round = 0; round < 2; round++) expect(names.map(normalizeHeaderKey)).toEqual(expected);
    expect(normalizeHeaderKey('message-id')).toBe('Message-ID');
    expect(normalizeHeaderKey('content-features')).toBe('Content-features');
  });

  it('still normalizes names past the bound of the cache', () => {
    const many = Array.from({ length: MAX_CACHED_KEYS + 50 }, (_, i) => `x-custom-header-${i}`);
    for (const n of many) expect(normalizeHeaderKey(n)).toBe(`X-Custom-Header-${n.slice(16)}`);
  });
});
