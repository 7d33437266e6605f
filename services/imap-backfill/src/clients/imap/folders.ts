/**
 * Which IMAP folder plays which role: special-use flags first (RFC 6154: \Sent, \Junk, \Trash),
 * then the usual names (Sent, Sent Items, Spam, Junk E-mail, Deleted Items, [Gmail]/...).
 * Pure: the LIST result in, the chosen path per role out.
 */
import type { FolderRole } from '../../mailbox/mailbox-client';

export interface ListedFolder {
  path: string;
  name: string;
  specialUse?: string;
  flags?: Set<string> | string[];
}

const SPECIAL_USE: Record<Exclude<FolderRole, 'inbox'>, string> = {
  sent: '\\Sent',
  spam: '\\Junk',
  trash: '\\Trash',
};

const NAMES: Record<Exclude<FolderRole, 'inbox'>, string[]> = {
  sent: ['sent', 'sent items', 'sent mail', 'sent messages', 'gesendet', 'envoyés'],
  spam: ['junk', 'spam', 'junk e-mail', 'junk email', 'bulk mail'],
  trash: ['trash', 'deleted items', 'deleted messages', 'bin', 'papierkorb', 'corbeille'],
};

export function resolveFolderRoles(folders: readonly ListedFolder[]): Record<FolderRole, string | null> {
  const inbox = folders.find((f) => f.path.toUpperCase() === 'INBOX' || f.specialUse === '\\Inbox');
  const out: Record<FolderRole, string | null> = {
    inbox: inbox?.path ?? 'INBOX',
    sent: null,
    spam: null,
    trash: null,
  };
  for (const role of ['sent', 'spam', 'trash'] as const) {
    const flag = SPECIAL_USE[role];
    const bySpecialUse = folders.find((f) => f.specialUse === flag || hasFlag(f.flags, flag));
    const byName =
      bySpecialUse ??
      NAMES[role]
        .map((n) => folders.find((f) => f.name.toLowerCase() === n || f.path.toLowerCase() === n))
        .find(Boolean);
    out[role] = byName?.path ?? null;
  }
  return out;
}

function hasFlag(flags: Set<string> | string[] | undefined, flag: string): boolean {
  if (!flags) return false;
  return Array.isArray(flags) ? flags.includes(flag) : flags.has(flag);
}
