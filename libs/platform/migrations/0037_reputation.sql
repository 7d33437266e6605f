-- Sender reputation and automatic pause (issue 29; docs/deliverability.md "Reputation and automatic
-- pause", libs/store/src/reputation.ts).
--
-- reputation_sends: one row per copy-recipient SENT (a log row whose terminal send event is
-- MAIL_DELIVERED or a final SMTP_ERROR), inserted by the single event writer (email-events.ts) in
-- the statement that records that event, with a sequence that orders the rows of a scope; its
-- flags are set by the same writer when a later invalid-recipient MAIL_BOUNCE (or the final
-- SMTP_ERROR itself) or a MAIL_SPAM of that log row is recorded. A scope's window is its last
-- REPUTATION_WINDOW rows (index scan of (tenant_id, domain|mailer_id, seq DESC) with LIMIT). The
-- rows go with their log row (ON DELETE CASCADE: log retention bounds the table).
-- Keyed by log_id (the upsert's and the cascade's key); seq is not indexed on its own (three index
-- entries per copy sent: the key and the two scope indexes).
CREATE TABLE reputation_sends (
  log_id          text PRIMARY KEY REFERENCES email_logs(id) ON DELETE CASCADE,
  seq             bigserial NOT NULL,
  tenant_id       text NOT NULL,
  domain          text NOT NULL,
  mailer_id       text NOT NULL,
  sent_at         timestamptz NOT NULL DEFAULT now(),
  invalid_bounce  boolean NOT NULL DEFAULT false,
  complaint       boolean NOT NULL DEFAULT false,
  -- Set by a resume on the rows of the resumed scope's window: dealt with, counted by no scope.
  cleared         boolean NOT NULL DEFAULT false
);
CREATE INDEX reputation_sends_domain_idx ON reputation_sends (tenant_id, domain, seq DESC);
CREATE INDEX reputation_sends_mailer_idx ON reputation_sends (tenant_id, mailer_id, seq DESC);

-- sending_pauses: a pause of a sending domain (key: the From domain, lowercased) or of a mailer
-- (key: its id). At most one open pause (resumed_at NULL) per scope: the unique index makes the
-- pause, and so its SENDING_PAUSED outbox row, happen once. Resuming closes it and clears the
-- rows of the scope's window (reputation_sends.cleared): the rates of every scope then count only
-- copies sent after them, so the old bounces pause neither the domain nor its mailer again.
CREATE TABLE sending_pauses (
  id          bigserial PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  scope       text NOT NULL CHECK (scope IN ('domain', 'mailer')),
  key         text NOT NULL,
  metric      text NOT NULL CHECK (metric IN ('invalid_recipient_bounce_rate', 'complaint_rate')),
  rate        double precision NOT NULL,
  window_n    integer NOT NULL,
  threshold   double precision NOT NULL,
  paused_at   timestamptz NOT NULL DEFAULT now(),
  resumed_at  timestamptz
);
CREATE UNIQUE INDEX sending_pauses_open_idx ON sending_pauses (tenant_id, scope, key) WHERE resumed_at IS NULL;
