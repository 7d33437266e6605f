import { ErrorText, type KeyScope } from '@mailyard/contracts';
import { rulePath, scopeNeeded, scopeRefusal } from './key-scope';

const allowed = (scope: KeyScope, method: string, url: string) => scopeRefusal(scope, method, url) === null;

describe('key scopes', () => {
  it('full may do everything', () => {
    for (const [m, u] of [
      ['POST', '/v1/keys'],
      ['DELETE', '/v1/keys/key_1'],
      ['POST', '/v1/email/template'],
      ['GET', '/v1/email/logs'],
      ['POST', '/v1/email/send'],
    ] as const)
      expect(allowed('full', m, u)).toBe(true);
  });

  it('send may send and cancel a send, in every URL form express routes there', () => {
    for (const u of [
      '/v1/email/send',
      '/v1/email/send/',
      '/V1/Email/Send?x=1',
      '/v1/email/send/01J0ABC/cancel',
      '/v1/email/send/01J0ABC/cancel/',
    ])
      expect(allowed('send', 'POST', u)).toBe(true);
    expect(scopeRefusal('send', 'GET', '/v1/email/logs')).toBe(ErrorText.scopeReadData);
    expect(scopeRefusal('send', 'POST', '/v1/webhook/register')).toBe(ErrorText.scopeChangeConfiguration);
    expect(scopeRefusal('send', 'POST', '/v1/email/send/a/b/cancel')).toBe(
      ErrorText.scopeChangeConfiguration,
    );
    expect(scopeRefusal('send', 'GET', '/v1/email/send')).toBe(ErrorText.scopeReadData);
    expect(scopeRefusal('send', 'POST', '/v1/keys')).toBe(ErrorText.scopeManageKeys);
  });

  it('read may GET (and HEAD/OPTIONS) anything but the keys', () => {
    for (const m of ['GET', 'HEAD', 'OPTIONS']) expect(allowed('read', m, '/v1/email/logs')).toBe(true);
    expect(allowed('read', 'GET', '/v1/audit?action=create')).toBe(true);
    // The domain report summaries (DMARC, TLS-RPT) are reads.
    expect(allowed('read', 'GET', '/v1/domain/example.com/dmarc?startDate=2026-01-01')).toBe(true);
    expect(allowed('read', 'GET', '/v1/domain/example.com/tls-reports')).toBe(true);
    expect(scopeRefusal('send', 'GET', '/v1/domain/example.com/dmarc')).toBe(ErrorText.scopeReadData);
    expect(scopeRefusal('read', 'POST', '/v1/email/send')).toBe(ErrorText.scopeSendEmail);
    expect(scopeRefusal('read', 'POST', '/v1/email/send/x/cancel')).toBe(ErrorText.scopeSendEmail);
    for (const m of ['POST', 'PUT', 'DELETE', 'PATCH'])
      expect(scopeRefusal('read', m, '/v1/email/template')).toBe(ErrorText.scopeChangeConfiguration);
    for (const u of ['/v1/keys', '/V1/KEYS/', '/v1/keys/key_1', '/v1/keys?pageSize=1'])
      expect(scopeRefusal('read', 'GET', u)).toBe(ErrorText.scopeManageKeys);
  });

  it('a path that only starts like a keys or send path is no such route', () => {
    expect(scopeNeeded('GET', '/v1/keysx').scope).toBe('read');
    expect(scopeNeeded('POST', '/v1/email/sendx').scope).toBe('full');
    expect(scopeNeeded('POST', '/v1/email/send/x/cancelx').scope).toBe('full');
  });

  it('compares paths as express routes them', () => {
    expect(rulePath('/V1/Keys/?a=b')).toBe('/v1/keys');
    expect(rulePath('/')).toBe('/');
  });
});
