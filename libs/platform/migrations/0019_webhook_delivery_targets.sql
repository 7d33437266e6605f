-- Per-target claims of the webhook dispatcher (libs/store claimDueDeliveries): the targets that
-- have work (a skip scan over webhook_id) and each target's due rows in order, from one index,
-- so a claim takes at most what each endpoint may run now instead of claiming and releasing
-- rows of an endpoint that is at its concurrency limit.
CREATE INDEX webhook_deliveries_target_due_idx ON webhook_deliveries (webhook_id, next_attempt_at)
  WHERE status IN ('pending', 'retrying');
