-- Provider event callbacks (SparkPost's event webhook, docs/providers.md "SparkPost callbacks"):
-- the tracking service stores every authenticated batch here before it answers 200, then a
-- worker of the same service claims stored batches (FOR UPDATE SKIP LOCKED, a lease in
-- `leased_until` as every leased row: libs/store lease-sql.ts) and processes them; a batch stored
-- but not processed (a crash, a restart) is claimed again once its lease ends.
CREATE TABLE provider_callback_batches (
  id            text PRIMARY KEY,
  tenant_id     text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  mailer_id     text NOT NULL,
  provider      text NOT NULL,
  -- The request body as received (JSON text; checked to be the provider's batch shape).
  body          text NOT NULL,
  -- The provider's batch id header (SparkPost X-MessageSystems-Batch-ID), for operators.
  batch_id      text,
  received_at   timestamptz NOT NULL DEFAULT now(),
  attempts      integer NOT NULL DEFAULT 0,
  lease_owner   text,
  leased_until  timestamptz,
  processed_at  timestamptz,
  last_error    text
);
-- The claim reads the oldest unprocessed batch.
CREATE INDEX provider_callback_batches_todo_idx ON provider_callback_batches (received_at)
  WHERE processed_at IS NULL;

-- Provider events already processed, per mailer: SparkPost's event_id, so a batch delivered
-- twice (SparkPost retries until it sees a 200) records nothing twice.
CREATE TABLE provider_callback_events (
  mailer_id     text NOT NULL,
  event_id      text NOT NULL,
  tenant_id     text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  processed_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (mailer_id, event_id)
);
