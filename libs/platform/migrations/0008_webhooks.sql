-- Tenant-level webhooks (docs/api/webhooks.md): one per event type per tenant.
-- Header values (often credentials) and the Standard Webhooks signing secret are sealed; the
-- header names are kept in the clear for `headers_present`.
CREATE TABLE webhooks (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  event           text NOT NULL CHECK (event IN ('EMAIL_EVENT', 'DOMAIN_VERIFICATION')),
  url             text NOT NULL,
  method          text NOT NULL DEFAULT 'POST',
  active          boolean NOT NULL DEFAULT true,
  -- webhook_options.events toggles of an EMAIL_EVENT webhook; null for DOMAIN_VERIFICATION.
  events          jsonb,
  header_names    text[] NOT NULL DEFAULT '{}',
  headers_sealed  bytea,
  secret_sealed   bytea NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX webhooks_tenant_event_idx ON webhooks (tenant_id, event);

-- One delivery = one HTTP request body (a batch of email events, or one single-object event)
-- to one target, retried until a 2xx or the end of the retry window. The dispatcher polls
-- due rows (next_attempt_at), so scheduled retries survive restarts in every mode.
-- target_kind 'webhook': webhook_id is webhooks.id; 'mailer': the incoming webhook of mailer webhook_id.
CREATE TABLE webhook_deliveries (
  id               text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  target_kind      text NOT NULL CHECK (target_kind IN ('webhook', 'mailer')),
  webhook_id       text NOT NULL,
  event_types      text[] NOT NULL,
  body             text NOT NULL,
  traceparent      text,
  status           text NOT NULL CHECK (status IN ('pending', 'retrying', 'delivered', 'dropped')),
  attempts         int NOT NULL DEFAULT 0,
  -- When the next attempt is due (null once delivered or dropped). Claiming an attempt moves it
  -- forward by a lease, so a dispatcher that dies mid-attempt leaves it due again for another.
  next_attempt_at  timestamptz,
  dropped_reason   text NOT NULL DEFAULT '',
  replay_of        text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at)
  WHERE status IN ('pending', 'retrying');
CREATE INDEX webhook_deliveries_tenant_idx ON webhook_deliveries (tenant_id, id);

CREATE TABLE webhook_delivery_attempts (
  delivery_id  text NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  attempt      int NOT NULL,
  at           timestamptz NOT NULL,
  status_code  int,
  latency_ms   int NOT NULL,
  error        text NOT NULL DEFAULT '',
  PRIMARY KEY (delivery_id, attempt)
);
