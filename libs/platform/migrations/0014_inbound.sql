-- Inbound routing (docs/api/inbound.md, docs/inbound.md). An incoming
-- domain is one of the tenant's verified sending domains with a webhook target; header values
-- (often credentials) are sealed, header names kept in the clear. Addresses are local parts,
-- stored lowercase, unique per domain.
CREATE TABLE inbound_domains (
  tenant_id       text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  domain          text NOT NULL,
  url             text NOT NULL,
  method          text NOT NULL CHECK (method IN ('GET', 'POST', 'PUT', 'DELETE', 'PATCH')),
  header_names    text[] NOT NULL DEFAULT '{}',
  headers_sealed  bytea,
  wildcard        boolean NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, domain)
);
-- The MX service finds the owner of a recipient domain by name: one tenant per domain.
CREATE UNIQUE INDEX inbound_domains_domain_idx ON inbound_domains (domain);

CREATE TABLE inbound_addresses (
  tenant_id       text NOT NULL,
  domain          text NOT NULL,
  username        text NOT NULL CHECK (username = lower(username)),
  active          boolean NOT NULL DEFAULT true,
  strict_replies  boolean NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, domain, username),
  FOREIGN KEY (tenant_id, domain) REFERENCES inbound_domains (tenant_id, domain) ON DELETE CASCADE
);

-- INCOMING_EMAIL deliveries go through the webhook dispatcher: target_kind 'inbound', webhook_id
-- is the incoming domain's name (its url, method and headers are read at each attempt).
ALTER TABLE webhook_deliveries DROP CONSTRAINT IF EXISTS webhook_deliveries_target_kind_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_target_kind_check
  CHECK (target_kind IN ('webhook', 'mailer', 'inbound'));
