-- Suppressions API (docs/api/suppressions.md): the reasons become the API's four values, each
-- suppression remembers the send that caused it, and lists read newest first per tenant.
-- - reason: `unsubscribe` (was stored as 'unsubscribed'), `hard_bounce`, `spam_complaint`,
--   `manual` (added through the API); anything else was never written, but would read as manual.
-- - ref_id: the send (sends.ref_id) whose bounce, complaint or unsubscribe suppressed the
--   address; null for manual and API additions. No foreign key: a suppression outlives the send's
--   rows (retention removes logs and events, never suppressions).
-- - (tenant_id, created_at DESC, email DESC): GET /v1/suppressions pages by that key (keyset
--   cursor), and its filters run over one tenant's entries of it.
UPDATE suppressions SET reason = 'unsubscribe' WHERE reason = 'unsubscribed';
UPDATE suppressions SET reason = 'manual'
 WHERE reason NOT IN ('unsubscribe', 'hard_bounce', 'spam_complaint', 'manual');
ALTER TABLE suppressions ALTER COLUMN reason SET DEFAULT 'unsubscribe';
ALTER TABLE suppressions ADD CONSTRAINT suppressions_reason_check
  CHECK (reason IN ('unsubscribe', 'hard_bounce', 'spam_complaint', 'manual'));
ALTER TABLE suppressions ADD COLUMN ref_id text;
CREATE INDEX suppressions_tenant_created_idx ON suppressions (tenant_id, created_at DESC, email DESC);
