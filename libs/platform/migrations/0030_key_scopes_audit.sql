-- API keys with scopes (docs/api/keys.md) and the audit log (docs/api/audit.md).
-- Existing keys (admin-issued, bootstrap) keep full access: scope defaults to 'full'.
-- last_used_at is written in batches by the gateway (not per request), so it is approximate.
ALTER TABLE api_keys ADD COLUMN scope text NOT NULL DEFAULT 'full' CHECK (scope IN ('full', 'send', 'read'));
ALTER TABLE api_keys ADD COLUMN name text NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
CREATE INDEX api_keys_tenant_live_idx ON api_keys (tenant_id, id) WHERE revoked_at IS NULL;

-- One row per change made through the /v1 API: who (key id, client address), what (action,
-- resource, resource id), when. Never a secret or a request body. `id` is a ULID (cursor order);
-- `at` is the time column retention expires rows by (RETENTION_AUDIT).
CREATE TABLE audit_log (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  at           timestamptz NOT NULL DEFAULT now(),
  key_id       text,
  action       text NOT NULL,
  resource     text NOT NULL,
  resource_id  text,
  ip           text
);
CREATE INDEX audit_log_tenant_id_idx ON audit_log (tenant_id, id);
CREATE INDEX audit_log_at_idx ON audit_log (at);
