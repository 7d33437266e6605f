import { isServiceSent, messageIdOf } from './service-sent';

describe('isServiceSent', () => {
  it('finds X-Is-Svc in the header block only', () => {
    expect(isServiceSent(Buffer.from('From: a@b.test\r\nX-Is-Svc: 1\r\n\r\nbody'))).toBe(true);
    expect(isServiceSent(Buffer.from('x-is-svc:true\nSubject: s\n\nbody'))).toBe(true);
    expect(isServiceSent(Buffer.from('From: a@b.test\r\n\r\nX-Is-Svc: 1\r\n'))).toBe(false);
    expect(isServiceSent(Buffer.from('From: a@b.test\r\nX-Is-Svcx: 1\r\n\r\n'))).toBe(false);
  });
});

describe('messageIdOf', () => {
  it('reads the header, folded or not', () => {
    expect(messageIdOf(Buffer.from('Subject: a\r\nMessage-ID: <a@b.test>\r\n\r\n'))).toBe('<a@b.test>');
    expect(messageIdOf(Buffer.from('message-id:\r\n <c@d.test>\r\n\r\n'))).toBe('<c@d.test>');
    expect(messageIdOf(Buffer.from('Subject: a\r\n\r\nMessage-ID: <x@y>\r\n'))).toBe('');
  });
});
