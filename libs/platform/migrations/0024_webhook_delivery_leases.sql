-- The webhook dispatcher's claims as HOT updates (libs/store claimDueDeliveries, docs/webhooks.md):
-- a claim used to move next_attempt_at forward by the lease, an indexed column, so every claim
-- wrote a new entry into each index of the row and left dead ones at the front of
-- webhook_deliveries_target_due_idx, which every later claim of that endpoint walked until a
-- vacuum. The lease now has its own column that no index names: a claim only sets leased_until
-- (and the record of the attempt clears it), which PostgreSQL can do in place on the page (a HOT
-- update) when the page has room: hence fillfactor 80.
ALTER TABLE webhook_deliveries ADD COLUMN leased_until timestamptz;
ALTER TABLE webhook_deliveries SET (fillfactor = 80);

-- Claims read webhook_deliveries_target_due_idx (0019); this one is no longer read by anything
-- and was written by every insert and claim.
DROP INDEX IF EXISTS webhook_deliveries_due_idx;

-- Delivered rows stay (deliveries API), so the default trigger (20% of the table dead) came ever
-- more rarely as the table grew while the dead entries of delivered rows piled up in front of the
-- due ones: vacuum after a fixed number of dead rows instead.
ALTER TABLE webhook_deliveries SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000);
