-- DMARC aggregate (RFC 7489 appendix C) and TLS-RPT (RFC 8460) reports received by the MX at
-- `dmarc@` / `tls-rpt@` the service domain (issue 29; docs/deliverability.md), stored per tenant
-- domain: a report names a domain (`policy_published.domain`, `policies[].policy.policy-domain`),
-- which is matched to the tenants' VERIFIED domains of that name or its closest parent (an
-- unverified claim to a domain never sees its reports). One report is stored once per domain
-- (the reporter's report id is the key: a report sent twice, or in two attachments, is one).
-- Rows are children of their report and go with it (retention, domain deletion).
CREATE TABLE dmarc_reports (
  id                  text PRIMARY KEY,
  tenant_id           text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  domain_id           text NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
  -- report_metadata
  org_name            text NOT NULL,
  reporter_email      text NOT NULL DEFAULT '',
  report_id           text NOT NULL,
  begin_at            timestamptz NOT NULL,
  end_at              timestamptz NOT NULL,
  -- policy_published: {domain, adkim, aspf, p, sp, pct}
  policy_domain       text NOT NULL,
  policy              jsonb NOT NULL DEFAULT '{}',
  inbound_message_id  text,
  received_at         timestamptz NOT NULL DEFAULT now(),
  UNIQUE (domain_id, org_name, report_id)
);
CREATE INDEX dmarc_reports_range_idx ON dmarc_reports (tenant_id, domain_id, end_at);
CREATE INDEX dmarc_reports_received_idx ON dmarc_reports (received_at);

-- One <record> of a report: its <row> and <identifiers>. dkim and spf are the DMARC-aligned
-- results of policy_evaluated (pass / fail); dkim_auth and spf_auth keep auth_results as read
-- ([{domain, selector?, result}], bounded).
CREATE TABLE dmarc_report_rows (
  report_id           text NOT NULL REFERENCES dmarc_reports(id) ON DELETE CASCADE,
  n                   integer NOT NULL,
  source_ip           text NOT NULL,
  count               bigint NOT NULL,
  disposition         text NOT NULL,
  dkim                text NOT NULL,
  spf                 text NOT NULL,
  header_from         text NOT NULL DEFAULT '',
  dkim_auth           jsonb NOT NULL DEFAULT '[]',
  spf_auth            jsonb NOT NULL DEFAULT '[]',
  PRIMARY KEY (report_id, n)
);

CREATE TABLE tls_reports (
  id                  text PRIMARY KEY,
  tenant_id           text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  domain_id           text NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
  organization_name   text NOT NULL,
  contact_info        text NOT NULL DEFAULT '',
  report_id           text NOT NULL,
  start_at            timestamptz NOT NULL,
  end_at              timestamptz NOT NULL,
  inbound_message_id  text,
  received_at         timestamptz NOT NULL DEFAULT now(),
  UNIQUE (domain_id, organization_name, report_id)
);
CREATE INDEX tls_reports_range_idx ON tls_reports (tenant_id, domain_id, start_at);
CREATE INDEX tls_reports_received_idx ON tls_reports (received_at);

-- One policies[] entry of a report: the policy's type and domain, its session counts, and its
-- failure-details as read ([{result_type, failed_session_count, sending_mta_ip?,
-- receiving_mx_hostname?, ...}], bounded).
CREATE TABLE tls_report_policies (
  report_id           text NOT NULL REFERENCES tls_reports(id) ON DELETE CASCADE,
  n                   integer NOT NULL,
  policy_type         text NOT NULL,
  policy_domain       text NOT NULL,
  mx_host             jsonb NOT NULL DEFAULT '[]',
  successful          bigint NOT NULL,
  failed              bigint NOT NULL,
  failure_details     jsonb NOT NULL DEFAULT '[]',
  PRIMARY KEY (report_id, n)
);
