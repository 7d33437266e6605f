-- Events keyed per recipient (issue 8): a copy's identity never changes. A send event is unique
-- per (copy, event, attempt, recipients): `recipient_key` holds the event's recipients,
-- lowercased, sorted and comma-joined, so one attempt may record a retry-scheduled and a final
-- SMTP_ERROR for different recipients of the same copy (no more `<copy_id>~f<attempt>` split).
-- Repeated events (opens, clicks, unsubscribes) use attempt 0 and `<recipient>@<event_at>` as
-- their key (they used negative attempt numbers before).
ALTER TABLE email_events ADD COLUMN recipient_key text NOT NULL DEFAULT '';
ALTER TABLE email_events DROP CONSTRAINT email_events_copy_id_event_attempt_key;
CREATE UNIQUE INDEX email_events_key_idx ON email_events (copy_id, event, attempt, recipient_key);
-- The last stamp of a (ref_id, event) is read for every new event (strictly increasing event_at).
CREATE INDEX email_events_stamp_idx ON email_events (tenant_id, ref_id, event, event_at);
