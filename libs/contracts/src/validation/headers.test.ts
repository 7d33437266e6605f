import { hasControlChars } from './control';
import { isFieldName, isProtectedHeader, isThreadingHeader } from './headers';

describe('header rules', () => {
  it('finds control characters', () => {
    for (const s of ['a\rb', 'a\nb', 'a\tb', '\u0000', '\u007f', '\u0085', '\u2028', '\u2029'])
      expect(hasControlChars(s)).toBe(true);
    for (const s of ['plain', 'ünïcödé', 'emoji 🎉', '']) expect(hasControlChars(s)).toBe(false);
  });

  it('validates field names', () => {
    expect(isFieldName('X-Custom_1.2')).toBe(true);
    for (const n of ['', 'X Y', 'X:Y', 'X\r\nY', 'Ä']) expect(isFieldName(n)).toBe(false);
  });

  it('protects service headers, not threading or custom ones', () => {
    for (const n of [
      'From',
      'to',
      'CC',
      'Bcc',
      'Subject',
      'Date',
      'Reply-To',
      'Sender',
      'Return-Path',
      'MIME-Version',
      'Content-Type',
      'content-transfer-encoding',
      'DKIM-Signature',
      'Received',
      'Resent-From',
      'ARC-Seal',
      'X-Is-Svc',
    ])
      expect(isProtectedHeader(n)).toBe(true);
    for (const n of [
      'Message-ID',
      'In-Reply-To',
      'References',
      'Thread-Id',
      'X-Campaign',
      'List-Unsubscribe',
    ])
      expect(isProtectedHeader(n)).toBe(false);
    expect(isThreadingHeader('message-id')).toBe(true);
    expect(isThreadingHeader('X-Foo')).toBe(false);
  });
});
