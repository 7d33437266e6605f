import { apiScopes, consentScopes, missingScopes, parseScopes } from './scopes';

describe('OAuth scopes by provider and mailer type', () => {
  it('Google: gmail.send to send, gmail.readonly to read, openid email for the address', () => {
    expect(consentScopes('google', 'smtp')).toEqual([
      'openid',
      'email',
      'https://www.googleapis.com/auth/gmail.send',
    ]);
    expect(consentScopes('google', 'imap')).toEqual([
      'openid',
      'email',
      'https://www.googleapis.com/auth/gmail.readonly',
    ]);
    expect(apiScopes('google', 'smtp_imap')).toEqual([
      'https://www.googleapis.com/auth/gmail.send',
      'https://www.googleapis.com/auth/gmail.readonly',
    ]);
  });

  it('Microsoft: offline_access, Mail.Send / Mail.Read, openid email', () => {
    expect(consentScopes('microsoft', 'smtp_imap')).toEqual([
      'offline_access',
      'openid',
      'email',
      'Mail.Send',
      'Mail.Read',
    ]);
    expect(consentScopes('microsoft', 'imap')).toEqual(['offline_access', 'openid', 'email', 'Mail.Read']);
  });

  it('finds the API scopes a grant lacks', () => {
    const granted = parseScopes('openid https://www.googleapis.com/auth/gmail.send  email');
    expect(missingScopes('google', 'smtp', granted)).toEqual([]);
    expect(missingScopes('google', 'smtp_imap', granted)).toEqual([
      'https://www.googleapis.com/auth/gmail.readonly',
    ]);
    expect(missingScopes('google', 'imap', [])).toEqual(['https://www.googleapis.com/auth/gmail.readonly']);
  });

  it('accepts Graph scopes in their full-URL form, case-insensitively', () => {
    const granted = parseScopes(
      'https://graph.microsoft.com/Mail.Send https://graph.microsoft.com/mail.read openid',
    );
    expect(missingScopes('microsoft', 'smtp_imap', granted)).toEqual([]);
    expect(missingScopes('microsoft', 'smtp_imap', ['Mail.Read'])).toEqual(['Mail.Send']);
  });

  it('parses an absent or empty scope as none', () => {
    expect(parseScopes(undefined)).toEqual([]);
    expect(parseScopes('')).toEqual([]);
  });
});
