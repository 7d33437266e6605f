import { classifyImapError } from './classify-imap-error';
import { ImapDeadlineError } from './deadline';

const err = (message: string, fields: Record<string, unknown> = {}) =>
  Object.assign(new Error(message), fields);

describe('classifyImapError', () => {
  it('reads authentication rejected from the flag or the response code', () => {
    expect(
      classifyImapError(err('Command failed', { authenticationFailed: true, responseText: 'No.' })),
    ).toMatchObject({
      kind: 'auth',
      text: 'No.',
      serverResponseCode: '',
    });
    expect(
      classifyImapError(err('Command failed', { serverResponseCode: 'AUTHENTICATIONFAILED' })).kind,
    ).toBe('auth');
  });

  it('tells deadlines, parser bounds, timeouts and unreachable servers apart', () => {
    expect(classifyImapError(new ImapDeadlineError('login', 3000)).kind).toBe('deadline');
    expect(classifyImapError(err('too large', { code: 'LiteralTooLarge' })).kind).toBe('over-limit');
    expect(classifyImapError(err('t', { code: 'GREETING_TIMEOUT' })).kind).toBe('timeout');
    expect(classifyImapError(err('t', { code: 'ETIMEDOUT' })).kind).toBe('timeout');
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE'])
      expect(classifyImapError(err('c', { code })).kind).toBe('unreachable');
  });

  it('tells a closed connection, a busy server, TLS, a dropped socket and a refusal apart', () => {
    expect(classifyImapError(err('Unexpected close', { code: 'ClosedAfterConnectTLS' })).kind).toBe('closed');
    expect(classifyImapError(err('x', { code: 'NoConnection' })).kind).toBe('closed');
    expect(classifyImapError(err('x', { serverResponseCode: 'UNAVAILABLE' })).kind).toBe('unavailable');
    expect(classifyImapError(err('certificate has expired', { code: 'CERT_HAS_EXPIRED' })).kind).toBe('tls');
    expect(classifyImapError(err('self signed certificate')).kind).toBe('tls');
    expect(classifyImapError(err('Socket hang up')).kind).toBe('dropped');
    expect(classifyImapError(err('Command failed', { responseText: 'Mailbox does not exist' }))).toEqual({
      kind: 'refused',
      code: '',
      message: 'Command failed',
      text: 'Mailbox does not exist',
      serverResponseCode: '',
    });
  });
});
