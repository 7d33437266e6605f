-- IMAP history backfill jobs (docs/api/backfill.md, docs/backfill.md).
-- One active (pending or processing) job per mailer: the partial unique index is the last word
-- when two start requests race past the gateway's Redis lock.
CREATE TABLE backfill_jobs (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  mailer_id       text NOT NULL,
  status          text NOT NULL CHECK (status IN ('pending', 'processing', 'done', 'failed', 'cancelled')),
  participant     text,
  window_start    timestamptz,
  window_end      timestamptz NOT NULL,
  max_count       int NOT NULL DEFAULT 0,
  folders         jsonb NOT NULL,
  processed       int NOT NULL DEFAULT 0,
  -- Time-based progress over the window, 0..100 (100 when done).
  percent         int NOT NULL DEFAULT 0,
  failed_reason   text NOT NULL DEFAULT '',
  -- Per folder role: {uidvalidity, done, delivered: [uid...] } (services/imap-backfill checkpoint.ts).
  checkpoint      jsonb NOT NULL DEFAULT '{}',
  -- Which worker runs the job, until when; an expired lease lets another worker resume it.
  lease_owner     text,
  lease_until     timestamptz,
  attempts        int NOT NULL DEFAULT 0,
  next_run_at     timestamptz NOT NULL DEFAULT now(),
  started_at      timestamptz NOT NULL DEFAULT now(),
  ended_at        timestamptz,
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX backfill_jobs_one_active_idx ON backfill_jobs (mailer_id)
  WHERE status IN ('pending', 'processing');
CREATE INDEX backfill_jobs_due_idx ON backfill_jobs (next_run_at) WHERE status IN ('pending', 'processing');

-- Live sync (one watcher per IMAP-capable mailer): where INBOX was read up to, and which
-- Message-IDs were already posted, so each is posted once.
CREATE TABLE imap_sync_state (
  mailer_id    text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  uidvalidity  text NOT NULL,
  last_uid     bigint NOT NULL,
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE imap_sync_posted (
  mailer_id    text NOT NULL,
  message_id   text NOT NULL,
  posted_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (mailer_id, message_id)
);

-- Extra request headers of one delivery (X-History-Backfill-Job-Id on backfill deliveries).
ALTER TABLE webhook_deliveries ADD COLUMN extra_headers jsonb;
