-- Instance liveness (docs/ha.md, "Failure modes"): every process that opens the PostgreSQL store
-- records a heartbeat row while it runs, keyed by what a run's owner record names (host, pid and
-- the process's start time), so lost-run recovery can tell a run whose owner stopped beating as
-- lost whatever host it ran on. `last_seen` is the database's clock: hosts' clocks never compare.
CREATE TABLE trellis_instances (
  host          text        NOT NULL,
  pid           integer     NOT NULL,
  process_start text        NOT NULL,
  started_at    timestamptz NOT NULL DEFAULT now(),
  last_seen     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (host, pid, process_start)
);
CREATE INDEX trellis_instances_by_last_seen ON trellis_instances (last_seen);
