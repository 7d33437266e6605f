/** What the API mailboxes (Gmail, Graph) are built with besides their client. */
export interface ApiMailboxOptions {
  /** Provider requests in flight per mailbox (metadata and sources): BACKFILL_API_CONCURRENCY. */
  concurrency: number;
}
