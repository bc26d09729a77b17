-- Lineage (issue 14): ingest answers once an event is appended; the graph
-- is folded from stored events behind it, in batches of hundreds (the
-- `lineage-fold` routine, and any read that must see what was stored
-- before it began). BENCHMARKS, "ninth pass", says why.
--
-- An event waits here from its append (same statement) until the
-- transaction that folds it deletes it. No foreign key: the row is written
-- with its event, and a per-row key check was half the cost of the old
-- ingest statement (migration 038).
CREATE TABLE lineage_unfolded (
    event_id BIGINT PRIMARY KEY
);

-- A stored event the fold could not write into the graph (it no longer
-- parses, or the database refused it on its own). Its sender already had
-- a 201, so it is kept here for admins to see, and a rebuild tries it
-- again.
CREATE TABLE lineage_fold_failures (
    event_id  BIGINT      PRIMARY KEY REFERENCES lineage_events (id),
    error     TEXT        NOT NULL,
    failed_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
