-- The provider's thread of a delivered copy (Gmail threadId, Microsoft Graph conversationId),
-- kept beside message_id so that events about the copy after its delivery (opens, clicks,
-- unsubscribes, bounces, complaints) carry the same `thread_id` as its MAIL_DELIVERED. Written by
-- the single event writer (libs/store email-events.ts) from MAIL_DELIVERED's details.thread_id;
-- '' for SMTP deliveries and for copies delivered before this column existed.
ALTER TABLE email_logs ADD COLUMN thread_id text NOT NULL DEFAULT '';
