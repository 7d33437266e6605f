-- Mailers: every configuration that can send or receive (domain, SMTP, IMAP, OAuth).
CREATE TABLE mailers (
  id               text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  config_type      text NOT NULL,
  connection_type  text NOT NULL CHECK (connection_type IN ('basic', 'oauth', 'domain')),
  name             text NOT NULL,
  email            text NOT NULL DEFAULT '',
  state            text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'disabled', 'deactivated')),
  -- Non-secret settings only (host, port, username, secure); secrets live sealed in `secret`.
  config           jsonb NOT NULL DEFAULT '{}',
  secret           bytea,
  incoming_webhook jsonb,
  state_reason     text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  deleted_at       timestamptz
);
CREATE INDEX mailers_tenant_idx ON mailers (tenant_id, id) WHERE deleted_at IS NULL;

-- Sending domains; each is also a mailer (same id, prefix domain_).
CREATE TABLE domains (
  id                      text PRIMARY KEY REFERENCES mailers(id) ON DELETE CASCADE,
  tenant_id               text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  name                    text NOT NULL,
  unicode_name            text NOT NULL,
  selector                text NOT NULL,
  dkim_public_key         text NOT NULL,
  dkim_private_key        bytea NOT NULL,
  custom_args             jsonb,
  is_tenant_domain        boolean NOT NULL DEFAULT false,
  is_tenant_subdomain     boolean NOT NULL DEFAULT false,
  shared_with_subaccounts boolean NOT NULL DEFAULT false,
  ips                     jsonb NOT NULL DEFAULT '[]',
  verified                boolean NOT NULL DEFAULT false,
  records                 jsonb NOT NULL DEFAULT '[]',
  verified_at             timestamptz,
  last_checked_at         timestamptz,
  next_check_at           timestamptz,
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now(),
  deleted_at              timestamptz
);
CREATE UNIQUE INDEX domains_tenant_name_idx ON domains (tenant_id, name) WHERE deleted_at IS NULL;
CREATE INDEX domains_next_check_idx ON domains (next_check_at) WHERE deleted_at IS NULL;

-- Detects a SECRET_KEY that differs from the one the stored secrets were sealed with.
CREATE TABLE secret_key_check (
  id      integer PRIMARY KEY CHECK (id = 1),
  sealed  bytea NOT NULL
);
