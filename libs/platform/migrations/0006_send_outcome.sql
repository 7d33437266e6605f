-- The terminal send event recorded for a recipient (MAIL_DELIVERED, final SMTP_ERROR, PHISHING,
-- MAIL_POLICY_REJECTION, MAIL_GENERATION_REJECTION); NULL while the send service may still
-- deliver it. Set once, under a row lock (services/send emit-event), so two processes that
-- deliver the same copy at the same time cannot both record an outcome. Tracking events move
-- `status` independently of it.
ALTER TABLE email_logs ADD COLUMN send_outcome text;
UPDATE email_logs SET send_outcome = COALESCE(last_event, status) WHERE status <> 'QUEUED';
