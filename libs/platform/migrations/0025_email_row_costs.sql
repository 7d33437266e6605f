-- PostgreSQL's work per email (issue 14, docs/scaling.md "Rows, indexes and WAL per email"):
-- every email inserts a sends row (per send), an email_logs row per recipient, an email_events
-- row per send event and outbox rows, and updates its email_logs row to its final status. Each
-- index on those tables is one more entry written (and WAL-logged) per insert, and per update
-- unless the update is HOT (no indexed column changes and the page has room: the new version
-- stays on the page, no index is touched). The indexes below were written per email and read by
-- nothing, or were the one reason the status update could not be HOT.

-- email_logs: GET /v1/email/logs filters the recipient by lower(recipient)
-- (email_logs_recipient_lower_idx, 0005); nothing reads the plain recipient.
DROP INDEX IF EXISTS email_logs_recipient_idx;

-- email_logs: `status` changes on every email (QUEUED -> MAIL_DELIVERED / FAILED, then tracking
-- events), so while it was indexed every status update wrote a new entry into each of the
-- table's eight indexes. Without it the update changes no indexed column and is HOT. The logs
-- API's status filter walks the tenant's rows newest first (email_logs_tenant_idx) and stops
-- after a page: statuses are few and common, so a page fills quickly; only the filter's
-- totalCount reads every row of the tenant (as the unfiltered count's index scan does).
DROP INDEX IF EXISTS email_logs_status_idx;
-- Room on each page for the updated versions (a HOT update needs the new version on the same
-- page; pruning frees the old versions for the next ones). A group of deliveries updates many
-- rows of one page in one transaction, before any old version can be pruned: half the page
-- holds the new versions of a page's rows (at 75, 55 % of the updates in bench:send were HOT;
-- at 50, 84-89 %). Applies to pages written from now on; an upgraded table's existing pages stay
-- as full as they are.
ALTER TABLE email_logs SET (fillfactor = 50);

-- email_events: (tenant_id, ref_id) is the leading prefix of email_events_stamp_idx (0011,
-- tenant_id, ref_id, event, event_at), which serves every query this one could.
DROP INDEX IF EXISTS email_events_ref_idx;
-- email_events: the event's key (copy_id, event, attempt, recipient_key; unique, 0011) is what
-- identifies an event and what every reader looks events up by; the bigserial `id` was looked
-- up by nothing (it orders a copy's events, which needs no index). The key becomes the primary
-- key and the index on `id` goes: one index entry less per event. `id` keeps its sequence.
ALTER TABLE email_events DROP CONSTRAINT email_events_pkey;
ALTER TABLE email_events ADD CONSTRAINT email_events_pkey PRIMARY KEY USING INDEX email_events_key_idx;

-- outbox: the relay deletes each row in the transaction that publishes it (OUTBOX_RETENTION_MS 0,
-- the default), so `sent_at IS NULL` holds for every row and this partial index was the primary
-- key again, written once more per outbox row. The relay's `WHERE sent_at IS NULL ORDER BY id
-- LIMIT n` walks the primary key. With a retention the rows marked sent wait in front of it until
-- the cleanup (a debugging setting; docs/scaling.md).
DROP INDEX IF EXISTS outbox_pending_idx;
