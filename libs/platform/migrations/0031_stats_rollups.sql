-- Stats rollups (issue 26 item 2, docs/operations.md "Stats", docs/api/stats.md): GET /v1/stats
-- reads these counters, never email_events. One row per tenant, span (`hour` or `day`), UTC
-- bucket of that span, sending domain (the From address's domain, lowercased), mailer, campaign
-- ('' = none) and slot. Every count goes into its hour row and its day row, in one statement
-- (rows in key order): a 30-day query by day reads 30 buckets' rows, not 720. The counters move in
-- the transaction that records what they count: `requested` with the accepted send's log rows
-- (libs/store sends.ts), every other one with the email_events row it counts, and only when that
-- row was newly inserted (libs/store email-events.ts): the event key makes a redelivered event
-- write nothing, so each event is counted exactly once. Counts are per recipient copy (one
-- email_logs row), like `requested`.
--
-- `slot` can shard a bucket (libs/store stats-rollup-sql.ts STATS_SLOTS, 1 today): each writer
-- adds into the slot of its database connection, so concurrent writers of one bucket would not
-- queue on one row lock; readers sum the slots.
CREATE TABLE stats_rollups (
  tenant_id       text NOT NULL,
  span            text NOT NULL CHECK (span IN ('hour', 'day')),
  bucket          timestamptz NOT NULL,
  domain          text NOT NULL,
  mailer_id       text NOT NULL,
  campaign_id     text NOT NULL,
  slot            smallint NOT NULL,
  requested       bigint NOT NULL DEFAULT 0,
  delivered       bigint NOT NULL DEFAULT 0,
  bounced         bigint NOT NULL DEFAULT 0,
  spam            bigint NOT NULL DEFAULT 0,
  opened          bigint NOT NULL DEFAULT 0,
  unique_opened   bigint NOT NULL DEFAULT 0,
  clicked         bigint NOT NULL DEFAULT 0,
  unique_clicked  bigint NOT NULL DEFAULT 0,
  unsubscribed    bigint NOT NULL DEFAULT 0,
  failed          bigint NOT NULL DEFAULT 0,
  rejected        bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, span, bucket, domain, mailer_id, campaign_id, slot)
);

-- The dimensions and the first-open/first-click flags of each recipient copy, so the event
-- writer finds them on the log row it already updates. `sending_domain` is filled at accept from
-- the send's From address; rows accepted before this migration keep '' (their events count under
-- the domain ''). Not indexed: the status update stays HOT (0025).
ALTER TABLE email_logs
  ADD COLUMN sending_domain text NOT NULL DEFAULT '',
  ADD COLUMN opened boolean NOT NULL DEFAULT false,
  ADD COLUMN clicked boolean NOT NULL DEFAULT false;
