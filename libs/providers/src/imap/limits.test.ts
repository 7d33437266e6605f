import {
  IMAP_LOGIN_MAX_BYTES,
  IMAP_MAX_LINE_BYTES,
  IMAP_MAX_RESPONSE_TOKENS,
  imapParserLimits,
  isImapLimitError,
} from './limits';

describe('imapParserLimits', () => {
  it('a connection that reads messages: a literal of the cap plus one byte, SEARCH-sized lines', () => {
    const cap = 25 * 1024 * 1024;
    const l = imapParserLimits(cap);
    expect(l.maxLiteralSize).toBe(cap + 1);
    expect(l.maxLineLength).toBe(IMAP_MAX_LINE_BYTES);
    // The response carries its literal or its line plus framing: above both, far below imapflow's 2 GiB.
    expect(l.maxResponseSize).toBeGreaterThan(Math.max(l.maxLiteralSize, l.maxLineLength));
    expect(l.maxResponseSize).toBeLessThan(64 * 1024 * 1024);
    expect(l.maxResponseTokens).toBe(IMAP_MAX_RESPONSE_TOKENS);
    expect(imapParserLimits(64 * 1024 * 1024).maxResponseSize).toBeGreaterThan(64 * 1024 * 1024 + 1);
  });

  it('a login check reads no message: a few KB of literal, line and response', () => {
    const l = imapParserLimits(null);
    expect(l.maxLiteralSize).toBe(IMAP_LOGIN_MAX_BYTES);
    expect(l.maxLineLength).toBe(IMAP_LOGIN_MAX_BYTES);
    expect(l.maxResponseSize).toBeLessThanOrEqual(2 * IMAP_LOGIN_MAX_BYTES);
  });
});

describe('isImapLimitError', () => {
  it("recognises imapflow's codes for a response over a bound, nothing else", () => {
    for (const code of [
      'LiteralTooLarge',
      'LineTooLarge',
      'ResponseTooLarge',
      'TooManyTokens',
      'TooManyResponses',
    ])
      expect(isImapLimitError(Object.assign(new Error('x'), { code }))).toBe(true);
    expect(isImapLimitError(Object.assign(new Error('x'), { code: 'NoConnection' }))).toBe(false);
    expect(isImapLimitError(new Error('LiteralTooLarge'))).toBe(false);
    expect(isImapLimitError(null)).toBe(false);
  });
});
