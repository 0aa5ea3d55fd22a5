-- The run id a key's pending claim creates its run under (docs/decisions.md, "A start answered
-- by no one: the Idempotency-Key's run id chosen before the run"): chosen when the key is first
-- claimed, kept when a request with the same body takes over a pending claim whose owner died,
-- so the taker finds the run its predecessor created instead of creating a second one.
ALTER TABLE trellis_idempotency_keys ADD COLUMN run_id text;
