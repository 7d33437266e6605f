import {
  MAILER_DESTINATION,
  credentialNeededAgain,
  mailerDestination,
  webhookDestination,
} from './credential-destination';

const conn = { host: 'smtp.example.com', port: 587, username: 'u', secure: 'Tls' };

describe('credentialNeededAgain (docs/architecture.md, security 7)', () => {
  it('asks for a stored credential again only when its destination moves and it is not given', () => {
    const before = mailerDestination(conn);
    for (const field of MAILER_DESTINATION) {
      const after = mailerDestination({ ...conn, [field]: `${conn[field]}-changed` });
      expect(credentialNeededAgain({ before, after, stored: true, given: false })).toBe(true);
      expect(credentialNeededAgain({ before, after, stored: true, given: true })).toBe(false);
      expect(credentialNeededAgain({ before, after, stored: false, given: false })).toBe(false);
    }
    expect(
      credentialNeededAgain({ before, after: mailerDestination({ ...conn }), stored: true, given: false }),
    ).toBe(false);
  });

  it('a field only one side has is a move', () => {
    expect(
      credentialNeededAgain({ before: { a: 1 }, after: { a: 1, b: 2 }, stored: true, given: false }),
    ).toBe(true);
    expect(
      credentialNeededAgain({ before: { a: 1, b: 2 }, after: { a: 1 }, stored: true, given: false }),
    ).toBe(true);
  });

  it('a mailer destination is host, port, username and TLS mode, nothing else', () => {
    expect(mailerDestination({ ...conn, password: 'p', name: 'n' } as never)).toEqual(conn);
  });

  it('a webhook destination is the URL origin: the path, query and default port do not move it', () => {
    const d = (u: string) => webhookDestination(u).origin;
    expect(d('https://hooks.example.com/a?x=1')).toBe(d('https://HOOKS.example.com:443/b'));
    expect(d('http://h.example/a')).toBe(d('http://h.example:80/'));
    for (const other of [
      'http://hooks.example.com/a',
      'https://hooks.example.com:8443/a',
      'https://evil.example/a',
      'https://hooks.example.com.evil.example/a',
    ])
      expect(d(other)).not.toBe(d('https://hooks.example.com/a'));
    // What does not parse, or has no origin, is its own destination.
    expect(d('not a url')).toBe('not a url');
    expect(d('mailto:a@example.com')).toBe('mailto:a@example.com');
    expect(d('not a url')).not.toBe(d('also not a url'));
  });
});
