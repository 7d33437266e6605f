-- SparkPost mailers (config_type 'sparkpost', id prefix sparkpost_): the API key is sealed in
-- `secret` like every mailer credential; SparkPost's webhook calls back with HTTP Basic auth using
-- credentials we issue at create and show once. The password is stored as its SHA-256 digest
-- (libs/platform secrets/issued-secret.ts); only the username is readable.
ALTER TABLE mailers ADD COLUMN callback_username text;
ALTER TABLE mailers ADD COLUMN callback_password_digest bytea;
