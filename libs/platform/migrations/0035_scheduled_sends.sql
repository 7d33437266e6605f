-- Scheduled sends (issue 26; docs/operations.md "Scheduled sends"): a send accepted with a
-- `send_at` ahead writes its send row and its log rows (status SCHEDULED) as any send does, and
-- instead of outbox rows one row here holding the outbox rows its release will write (the
-- `send.email` commands, built at accept: exchange, routing key, envelope). The send service's
-- leased release (libs/store scheduled-sends.ts releaseDue) moves due rows into the outbox and
-- sets their log rows QUEUED in one statement; a cancel deletes the row and sets the log rows
-- CANCELLED in one transaction. Whichever takes the row's lock first wins: never both.
-- The outbox itself is unchanged, so the relay's query and latency for immediate sends are too.
CREATE TABLE scheduled_sends (
  ref_id      text PRIMARY KEY,
  tenant_id   text NOT NULL,
  send_at     timestamptz NOT NULL,
  -- [{exchange, routing_key, message}], in publishing order.
  commands    jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
-- The release takes the earliest due rows; the next due time is the first entry.
CREATE INDEX scheduled_sends_due_idx ON scheduled_sends (send_at);
