import { resolveFolderRoles } from './folders';

describe('resolveFolderRoles', () => {
  it('prefers special-use flags over names', () => {
    const roles = resolveFolderRoles([
      { path: 'INBOX', name: 'INBOX' },
      { path: 'Sent', name: 'Sent' },
      { path: 'Outbox Copies', name: 'Outbox Copies', specialUse: '\\Sent' },
      { path: 'Junk', name: 'Junk', specialUse: '\\Junk' },
      { path: 'Bin', name: 'Bin', flags: new Set(['\\Trash']) },
    ]);
    expect(roles).toEqual({ inbox: 'INBOX', sent: 'Outbox Copies', spam: 'Junk', trash: 'Bin' });
  });

  it('falls back to the usual names, and null when absent', () => {
    const roles = resolveFolderRoles([
      { path: 'INBOX', name: 'INBOX' },
      { path: 'Sent Items', name: 'Sent Items' },
      { path: 'Spam', name: 'Spam' },
    ]);
    expect(roles).toEqual({ inbox: 'INBOX', sent: 'Sent Items', spam: 'Spam', trash: null });
  });
});
