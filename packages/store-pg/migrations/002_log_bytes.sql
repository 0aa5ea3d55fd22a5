-- Bytes written to each log, so log chunks from workers (each at a byte offset) land exactly
-- once whichever coordinator receives them: bytes below this were applied before (docs/ha.md).
ALTER TABLE trellis_logs ADD COLUMN bytes bigint NOT NULL DEFAULT 0;
UPDATE trellis_logs l SET bytes = octet_length(l.partial) + coalesce(
  (SELECT sum(octet_length(x.content) + 1) FROM trellis_log_lines x WHERE x.log_id = l.id), 0);
