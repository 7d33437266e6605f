-- Idempotency-Key: hash of the accepted request, so a retry with the same key and body is told
-- apart from a different request that reuses the key (422).
ALTER TABLE sends ADD COLUMN request_hash text;

-- GET /v1/email/logs filters: recipient address case-insensitively, recipient domain exactly,
-- both walked newest first by id.
CREATE INDEX email_logs_recipient_lower_idx ON email_logs (tenant_id, lower(recipient), id);
CREATE INDEX email_logs_domain_idx ON email_logs (tenant_id, recipient_domain, id);
