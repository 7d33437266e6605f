-- Tenants and their API keys (keys stored as SHA-256 hashes only).
CREATE TABLE tenants (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  tier        text NOT NULL CHECK (tier IN ('standard', 'enterprise')),
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  key_hash    bytea NOT NULL UNIQUE,
  prefix      text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz
);
CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id);

CREATE TABLE templates (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  name        text NOT NULL,
  subject     text NOT NULL,
  content     jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
-- Cursor pagination walks (tenant_id, id); ids are ULIDs, so this is creation order.
CREATE INDEX templates_tenant_id_idx ON templates (tenant_id, id);

-- Transactional outbox: written with domain rows, published by the relay.
CREATE TABLE outbox (
  id           bigserial PRIMARY KEY,
  exchange     text NOT NULL,
  routing_key  text NOT NULL,
  message      jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  sent_at      timestamptz
);
CREATE INDEX outbox_pending_idx ON outbox (id) WHERE sent_at IS NULL;
