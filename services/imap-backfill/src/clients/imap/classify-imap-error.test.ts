import { classifyImapError } from './classify-imap-error';

describe('classifyImapError', () => {
  it('authentication rejected is auth', () => {
    const err = Object.assign(new Error('Command failed'), {
      authenticationFailed: true,
      serverResponseCode: 'AUTHENTICATIONFAILED',
      responseText: 'Authentication failed.',
    });
    expect(classifyImapError(err, 'imap.test')).toEqual({
      kind: 'auth',
      message: '[AUTHENTICATIONFAILED] Authentication failed.',
    });
  });
  it('connection failures are transient, with the host', () => {
    const err = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(classifyImapError(err, 'imap.test')).toMatchObject({ kind: 'transient' });
    expect(
      classifyImapError(Object.assign(new Error('x'), { serverResponseCode: 'UNAVAILABLE' }), 'h').kind,
    ).toBe('transient');
  });
  it('other server refusals are terminal', () => {
    const err = Object.assign(new Error('Command failed'), { responseText: 'Mailbox does not exist' });
    expect(classifyImapError(err, 'imap.test')).toEqual({
      kind: 'terminal',
      message: 'imap.test: Mailbox does not exist',
    });
  });
});
