-- The change feed behind the in-memory run listing (src/runs/run-listing.ts): every insert or
-- update of a run stamps it with the id of the transaction that wrote it, and every deletion
-- leaves a tombstone stamped the same way. A process reads "what changed since transaction W",
-- where W is the oldest transaction still running at its previous read (pg_snapshot_xmin), so a
-- write committed late by a transaction that started early is never skipped.
ALTER TABLE trellis_runs ADD COLUMN changed_xid bigint NOT NULL DEFAULT 0;
CREATE INDEX trellis_runs_by_change ON trellis_runs (changed_xid);

CREATE FUNCTION trellis_runs_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.changed_xid := pg_current_xact_id()::text::bigint;
  RETURN NEW;
END $$;
CREATE TRIGGER trellis_runs_stamp BEFORE INSERT OR UPDATE ON trellis_runs
  FOR EACH ROW EXECUTE FUNCTION trellis_runs_stamp();

-- Tombstones of deleted runs (delete run, retention); pruned by retention after an hour, the
-- highest pruned stamp kept in trellis_runs_gone_floor so a process that read before it knows
-- it may have missed a deletion and reads everything again.
CREATE TABLE trellis_runs_gone (
  root_name   text        NOT NULL,
  root_run_id text        NOT NULL,
  name        text        NOT NULL,
  dag_run_id  text        NOT NULL,
  changed_xid bigint      NOT NULL,
  deleted_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX trellis_runs_gone_by_change ON trellis_runs_gone (changed_xid);
CREATE INDEX trellis_runs_gone_by_time ON trellis_runs_gone (deleted_at);
CREATE TABLE trellis_runs_gone_floor (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  xid bigint  NOT NULL
);
INSERT INTO trellis_runs_gone_floor (one, xid) VALUES (true, 0);

CREATE FUNCTION trellis_runs_tombstone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO trellis_runs_gone (root_name, root_run_id, name, dag_run_id, changed_xid)
    VALUES (OLD.root_name, OLD.root_run_id, OLD.name, OLD.dag_run_id,
            pg_current_xact_id()::text::bigint);
  RETURN OLD;
END $$;
CREATE TRIGGER trellis_runs_tombstone AFTER DELETE ON trellis_runs
  FOR EACH ROW EXECUTE FUNCTION trellis_runs_tombstone();
