-- Raw messages accepted by the MX service (services/inbound-smtp). The SMTP session answers 250
-- only after this row (and the outbox message announcing it) is committed; the bus consumer
-- parses, routes and hands the payloads to the webhook dispatcher, then marks it processed.
-- recipients: [{address, tenant_id, domain, mailer_id}] accepted at RCPT (and after DATA).
CREATE TABLE inbound_messages (
  id            text PRIMARY KEY,
  received_at   timestamptz NOT NULL DEFAULT now(),
  remote_ip     text NOT NULL DEFAULT '',
  helo          text NOT NULL DEFAULT '',
  mail_from     text NOT NULL DEFAULT '',
  recipients    jsonb NOT NULL,
  raw           bytea NOT NULL,
  size          int NOT NULL,
  status        text NOT NULL DEFAULT 'stored' CHECK (status IN ('stored', 'processed')),
  processed_at  timestamptz
);
CREATE INDEX inbound_messages_stored_idx ON inbound_messages (received_at) WHERE status = 'stored';
