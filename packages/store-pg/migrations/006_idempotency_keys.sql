-- Idempotency keys shared by every instance (docs/decisions.md, "Idempotency keys across
-- instances"): a request claims its key by inserting a pending row (dag_run_id NULL) before it
-- creates the run, then fills in the run; a request with the key on any instance finds the row.
-- `claim` names the request holding a pending row (only it fills or releases it);
-- `pending_until` is the database's clock (hosts' clocks never compare): a pending row past it
-- lost its owner and is taken over. `created_at_ms` is the run's creation (the 24 h TTL).
CREATE TABLE trellis_idempotency_keys (
  key           text        PRIMARY KEY,
  fingerprint   text        NOT NULL,
  request       text        NOT NULL,
  name          text,
  dag_run_id    text,
  created_at_ms bigint      NOT NULL,
  claim         text        NOT NULL,
  pending_until timestamptz
);
CREATE INDEX trellis_idempotency_keys_by_created ON trellis_idempotency_keys (created_at_ms);
