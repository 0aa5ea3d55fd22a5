-- Suspend flags of the DAG files (docs/decisions.md, "Suspend flags in the PostgreSQL store"): a
-- DAG is suspended while its file name has a row, for every instance on the database. Each change
-- notifies `trellis_dag_suspend_flags` (whatever wrote it: the API, `trellis migrate store`, psql),
-- so the instances re-read the table within a moment; they also re-read it on a timer.
CREATE TABLE trellis_dag_suspend_flags (
  file_name    text        PRIMARY KEY,
  suspended_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION trellis_dag_suspend_flags_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('trellis_dag_suspend_flags', '');
  RETURN NULL;
END
$$;

CREATE TRIGGER trellis_dag_suspend_flags_changed
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON trellis_dag_suspend_flags
  FOR EACH STATEMENT EXECUTE FUNCTION trellis_dag_suspend_flags_notify();
