-- Schedule fires are pruned (docs/decisions.md, "Pruning the schedule-fire ledger"): rows older
-- than a day go, except the newest of all, which a new leader resumes from. The index serves the
-- prune, the latest fire of all and the per-DAG resume (`fire_at >= since`).
CREATE INDEX trellis_schedule_fires_by_time ON trellis_schedule_fires (fire_at);
