-- OAuth mailers (docs/oauth.md): the tenants' own OAuth apps, and the grant each OAuth mailer holds.

-- An app registered with Google or Microsoft by a tenant; the client secret is sealed. Deleting an
-- app removes the row (refused while a mailer's grant names it).
CREATE TABLE oauth_apps (
  id                text PRIMARY KEY,
  tenant_id         text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  provider          text NOT NULL CHECK (provider IN ('google', 'microsoft')),
  client_id         text NOT NULL,
  client_secret     bytea NOT NULL,
  redirect_uri      text,
  -- Microsoft: the directory in the authority (GUID, domain, common, organizations, consumers).
  directory_tenant  text,
  created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_apps_tenant_idx ON oauth_apps (tenant_id, id);

-- The grant of one OAuth mailer (same id as the mailer). `app_id` is an oauth_apps id, or
-- `google` / `microsoft` for the deployment's apps (from the environment), hence no foreign key.
-- Tokens are sealed; `access_expires_at` drives the refresh ahead of expiry.
CREATE TABLE oauth_grants (
  mailer_id          text PRIMARY KEY REFERENCES mailers(id) ON DELETE CASCADE,
  tenant_id          text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  provider           text NOT NULL CHECK (provider IN ('google', 'microsoft')),
  app_id             text NOT NULL,
  account_email      text NOT NULL,
  scopes             jsonb NOT NULL DEFAULT '[]',
  refresh_token      bytea,
  access_token       bytea,
  access_expires_at  timestamptz,
  -- Bumped on every token write: a refresh stores its result only over the version it read.
  version            bigint NOT NULL DEFAULT 1,
  updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_grants_app_idx ON oauth_grants (tenant_id, app_id);
