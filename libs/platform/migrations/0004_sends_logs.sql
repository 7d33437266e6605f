-- One row per accepted POST /v1/email/send; holds the validated request for the send service.
CREATE TABLE sends (
  ref_id           text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  mailer_id        text NOT NULL,
  campaign_id      text,
  custom_args      jsonb,
  request          jsonb NOT NULL,
  idempotency_key  text,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX sends_idempotency_idx ON sends (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- Email log: one row per recipient. `copy_id` groups the recipients of one rendered message
-- (with substitutions each `to` recipient has its own copy; without, one copy for all).
CREATE TABLE email_logs (
  id                text PRIMARY KEY,
  ref_id            text NOT NULL REFERENCES sends(ref_id) ON DELETE CASCADE,
  tenant_id         text NOT NULL,
  copy_id           text NOT NULL,
  recipient         text NOT NULL,
  recipient_domain  text NOT NULL,
  recipient_type    text NOT NULL CHECK (recipient_type IN ('to', 'cc', 'bcc')),
  status            text NOT NULL DEFAULT 'QUEUED',
  subject           text NOT NULL DEFAULT '',
  mailer_id         text NOT NULL,
  campaign_id       text,
  message_id        text NOT NULL DEFAULT '',
  last_event        text,
  failure_reason    text NOT NULL DEFAULT '',
  attempts          integer NOT NULL DEFAULT 0,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  delivered_at      timestamptz
);
CREATE INDEX email_logs_tenant_idx ON email_logs (tenant_id, id);
CREATE INDEX email_logs_ref_idx ON email_logs (tenant_id, ref_id);
CREATE INDEX email_logs_copy_idx ON email_logs (copy_id);
CREATE INDEX email_logs_status_idx ON email_logs (tenant_id, status, id);
CREATE INDEX email_logs_recipient_idx ON email_logs (tenant_id, recipient);
CREATE INDEX email_logs_campaign_idx ON email_logs (tenant_id, campaign_id) WHERE campaign_id IS NOT NULL;

-- Every event emitted for a copy; the unique key makes event emission idempotent.
CREATE TABLE email_events (
  id          bigserial PRIMARY KEY,
  tenant_id   text NOT NULL,
  ref_id      text NOT NULL,
  copy_id     text NOT NULL,
  event       text NOT NULL,
  attempt     integer NOT NULL DEFAULT 0,
  event_at    timestamptz NOT NULL,
  payload     jsonb NOT NULL,
  UNIQUE (copy_id, event, attempt)
);
CREATE INDEX email_events_ref_idx ON email_events (tenant_id, ref_id);

-- Unsubscribed addresses per tenant (lowercased); suppressed at send.
CREATE TABLE suppressions (
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  email       text NOT NULL,
  reason      text NOT NULL DEFAULT 'unsubscribed',
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, email)
);
