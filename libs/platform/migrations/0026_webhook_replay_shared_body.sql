-- Replays share the stored body (issue 23 item 5): POST /v1/webhook/deliveries/{id}/replay used to
-- copy the body into the new row, so 30 replays of a 7 MB inbound delivery stored 210 MB more.
-- A replay now stores no body: body_of names the delivery that holds it (the first of the chain:
-- a replay of a replay points at the same row), and the dispatcher's claim reads it from there.
-- Exactly one of body / body_of is set. A delivery removed (a retention purge, a deleted tenant)
-- takes the replays that share its body with it.
ALTER TABLE webhook_deliveries ALTER COLUMN body DROP NOT NULL;
ALTER TABLE webhook_deliveries ADD COLUMN body_of text;
-- NOT VALID: every existing row has a body and no body_of; only new rows need the checks (a full
-- scan under an exclusive lock would stall the dispatcher on a large table).
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_body_of_fkey
  FOREIGN KEY (body_of) REFERENCES webhook_deliveries (id) ON DELETE CASCADE NOT VALID;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_body_check
  CHECK ((body IS NULL) = (body_of IS NOT NULL)) NOT VALID;
-- The cascade finds a delivery's replays by this index; only replays are in it.
CREATE INDEX webhook_deliveries_body_of_idx ON webhook_deliveries (body_of) WHERE body_of IS NOT NULL;
