import { counter, gauge } from '@mailyard/platform';

/** imap-backfill metrics on /metrics of the ops port (prom-client, shared registry). */
export const backfillPosted = counter(
  'mailyard_backfill_messages_posted_total',
  'Historical messages posted as INCOMING_EMAIL by history backfill jobs (broker-confirmed)',
);
export const backfillJobsEnded = counter(
  'mailyard_backfill_jobs_ended_total',
  'History backfill jobs this process ended, by status (done, failed)',
  ['status'],
);
export const syncWatched = gauge('mailyard_imap_sync_watched', 'Mailboxes this process watches (live sync)');
export const syncPosted = counter(
  'mailyard_imap_sync_messages_posted_total',
  'New INBOX messages posted as INCOMING_EMAIL by live sync (first sight of a Message-ID)',
);
export const syncFailures = counter(
  'mailyard_imap_sync_connection_failures_total',
  'Live sync connection failures (each is retried with back-off)',
);
export const mailboxTooLarge = counter(
  'mailyard_mailbox_messages_too_large_total',
  'Messages over IMAP_MAX_MESSAGE_BYTES, not read and posted as the INCOMING_EMAIL error form (backfill and live sync)',
);
export const imapStrayRows = counter(
  'mailyard_imap_stray_fetch_responses_total',
  'IMAP FETCH responses ignored: UIDs nobody asked for, a UID again, rows without the items asked for',
);
