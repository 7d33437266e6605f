-- Retention (issue 26 item 7; docs/operations.md "Retention", libs/store/src/retention.ts): the
-- gateway's sweeper removes expired rows oldest first, each batch a keyset step along the row's time
-- column (`WHERE <time> >= <last batch's> AND <time> < <cutoff> ORDER BY <time> LIMIT n`), so a
-- batch reads only the rows it removes, never the ones the previous batches already removed. Each
-- time column needs an index for that walk. None of these columns is ever updated, so the status
-- and lease updates of these tables stay HOT (docs/scaling.md "Rows, indexes and WAL per email").
--
-- CREATE INDEX (not CONCURRENTLY: migrations run in one transaction) blocks writes to the table
-- while it builds. On a large installation create them CONCURRENTLY by hand before upgrading, with
-- these names (docs/deploy.md "Retention indexes (migration 0033)"); IF NOT EXISTS then skips them.
CREATE INDEX IF NOT EXISTS email_logs_created_idx ON email_logs (created_at);
CREATE INDEX IF NOT EXISTS sends_created_idx ON sends (created_at);
CREATE INDEX IF NOT EXISTS email_events_event_at_idx ON email_events (event_at);
CREATE INDEX IF NOT EXISTS inbound_messages_received_idx ON inbound_messages (received_at);
CREATE INDEX IF NOT EXISTS webhook_deliveries_created_idx ON webhook_deliveries (created_at);
-- Provider callbacks (0028): processed batches and the processed event ids. (audit_log.at is
-- indexed by 0030.)
CREATE INDEX IF NOT EXISTS provider_callback_batches_received_idx ON provider_callback_batches (received_at);
CREATE INDEX IF NOT EXISTS provider_callback_events_processed_idx ON provider_callback_events (processed_at);

-- A send goes once its last log row is gone; removing a sends row makes PostgreSQL look up its
-- email_logs by ref_id alone (the ON DELETE CASCADE of email_logs_ref_id_fkey), which the
-- (tenant_id, ref_id) index cannot serve: every removed send read the whole email_logs table. An
-- index on ref_id serves that lookup and every query of the old one (they all give both columns
-- by equality; a ref_id is one send, of one tenant), so it replaces it: no more index entries per
-- email than before.
CREATE INDEX IF NOT EXISTS email_logs_ref_id_idx ON email_logs (ref_id);
DROP INDEX IF EXISTS email_logs_ref_idx;
