-- Sending domains: background re-check bookkeeping, and DKIM keys wiped on delete.
-- Start of the current unverified stretch (creation, or when a verified domain lost its
-- records); unverified domains are re-checked with back-off for a window after it. Null while verified.
ALTER TABLE domains ADD COLUMN unverified_since timestamptz;
UPDATE domains SET unverified_since = created_at WHERE NOT verified;
-- A deleted domain keeps its row (its mailer reads as `deleted` to the send service) but not its key.
ALTER TABLE domains ALTER COLUMN dkim_private_key DROP NOT NULL;
CREATE INDEX domains_tenant_id_idx ON domains (tenant_id, id) WHERE deleted_at IS NULL;

-- Incoming webhook of an IMAP-capable mailer: `incoming_webhook` keeps url, method and the header
-- names; the header values (often credentials) are sealed here as JSON.
ALTER TABLE mailers ADD COLUMN incoming_webhook_secret bytea;
