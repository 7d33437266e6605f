import { ImapDeadlineError, classifyImapError as classifyFailure } from '@mailyard/providers';
import { imapMailboxFailure } from './imap-failure';

const classifyImapError = (err: unknown, host: string) => imapMailboxFailure(classifyFailure(err), host);

describe('IMAP failures as mailbox errors', () => {
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
  it('a command past its deadline is transient (retried), with the host', () => {
    expect(classifyImapError(new ImapDeadlineError('FETCH', 3000), 'imap.test')).toEqual({
      kind: 'transient',
      message: 'imap.test: FETCH got no answer within 3000 ms',
    });
  });
  it('a response over a parser bound is terminal: the server would send it again', () => {
    const err = Object.assign(
      new Error('Literal size 1000000000 exceeds maximum allowed size of 1025 bytes'),
      {
        code: 'LiteralTooLarge',
      },
    );
    expect(classifyImapError(err, 'imap.test')).toEqual({
      kind: 'terminal',
      message:
        'imap.test: the server sent a response over the limit: Literal size 1000000000 exceeds maximum allowed size of 1025 bytes (LiteralTooLarge)',
    });
  });
});
