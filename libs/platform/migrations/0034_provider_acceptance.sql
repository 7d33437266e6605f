-- A copy handed to an API provider that reports the outcome later by callback (SparkPost): the
-- provider accepted the recipient, so the send service must not send it again (a redelivered
-- command, the embedded bus's crash recovery), yet no terminal send event exists until the
-- callback's MAIL_DELIVERED / MAIL_BOUNCE / ... arrives (send_outcome stays NULL, status QUEUED).
-- `provider_transmission_id` is the provider's id of what it accepted (SparkPost's transmission id).
ALTER TABLE email_logs ADD COLUMN provider_accepted_at timestamptz;
ALTER TABLE email_logs ADD COLUMN provider_transmission_id text;
