-- Live sync of API mailboxes (Gmail API, Microsoft Graph; docs/backfill.md "Live mail and backfill
-- for OAuth mailboxes"): where INBOX was read up to is the provider's own opaque cursor (a Gmail
-- history id, a Graph delta link of a few hundred characters), kept beside the IMAP columns.
-- IMAP rows keep uidvalidity/last_uid and a NULL cursor; API rows carry the service name as
-- uidvalidity and 0 as last_uid.
ALTER TABLE imap_sync_state ADD COLUMN cursor text;
