-- Runs: one row per run, its record (node statuses included) and DAG snapshot as JSON, with the
-- fields listings filter and sort on as columns. A top-level run is its own root.
CREATE TABLE trellis_runs (
  root_name         text        NOT NULL,
  root_run_id       text        NOT NULL,
  name              text        NOT NULL,
  dag_run_id        text        NOT NULL,
  is_child          boolean     NOT NULL,
  status            smallint    NOT NULL,
  queue             text        NOT NULL,
  created_ms        double precision,
  revision          bigint      NOT NULL,
  summary           jsonb       NOT NULL,
  record            jsonb       NOT NULL,
  snapshot          jsonb       NOT NULL,
  log_dir           text        NOT NULL,
  stop_requested_at timestamptz,
  PRIMARY KEY (root_name, root_run_id, name, dag_run_id)
);
-- the history index: a DAG's runs newest first, and all runs newest first
CREATE INDEX trellis_runs_by_dag ON trellis_runs (name, created_ms DESC NULLS LAST, dag_run_id DESC);
CREATE INDEX trellis_runs_by_time ON trellis_runs (created_ms DESC NULLS LAST, dag_run_id DESC);
-- the queue ledger (queued runs by queue) and the runs recovery looks at
CREATE INDEX trellis_runs_active ON trellis_runs (queue, status) WHERE status IN (0, 1, 5);
CREATE INDEX trellis_runs_children ON trellis_runs (root_name, root_run_id) WHERE is_child;

-- Logs: one row per log (its path is the key workers and the API use), its lines in rows, so a
-- window (head, tail, offset and limit) is one indexed range query. `partial` is the unfinished
-- last line.
CREATE TABLE trellis_logs (
  id               bigserial PRIMARY KEY,
  path             text   NOT NULL UNIQUE,
  dir              text   NOT NULL,
  total_lines      bigint NOT NULL DEFAULT 0,
  partial          text   NOT NULL DEFAULT '',
  truncated_reason text
);
CREATE INDEX trellis_logs_by_dir ON trellis_logs (dir);
CREATE TABLE trellis_log_lines (
  log_id  bigint NOT NULL REFERENCES trellis_logs (id) ON DELETE CASCADE,
  line_no bigint NOT NULL,
  content text   NOT NULL,
  PRIMARY KEY (log_id, line_no)
);

-- Leases (the scheduler role, later the leader): the holder and a fencing token that grows
-- with every change of holder.
CREATE TABLE trellis_leases (
  name       text        PRIMARY KEY,
  holder     text        NOT NULL,
  token      bigint      NOT NULL,
  expires_at timestamptz NOT NULL
);

-- Schedule fires: one row per DAG and fire time, so a fire is taken by one instance only.
CREATE TABLE trellis_schedule_fires (
  dag_name text        NOT NULL,
  fire_at  timestamptz NOT NULL,
  fired_by text        NOT NULL,
  fired_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (dag_name, fire_at)
);
