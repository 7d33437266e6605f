/** The mailbox folders a backfill may walk (docs/api/backfill.md, `folders`), by role. */
export const MAIL_FOLDER_ROLES = ['inbox', 'sent', 'spam', 'trash'] as const;
export type MailFolderRole = (typeof MAIL_FOLDER_ROLES)[number];
