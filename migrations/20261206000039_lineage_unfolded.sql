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

-- A queue: every row is deleted within seconds of its insert. Vacuumed
-- after a fixed number of dead rows rather than a fraction of a table
-- that is always nearly empty, so the fold's ordered scan does not walk
-- over dead index entries.
ALTER TABLE lineage_unfolded SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 5000
);

-- Each fold rewrites the last-seen times of the nodes, facets and aliases
-- its events name (a live stream moves them with every event). Room left
-- in each page lets Postgres write the new version beside the old one
-- without touching the indexes (a HOT update): in the ingest bench, with
-- full pages, 2.5% of facet and 27% of node updates were. Pages written
-- from now on keep the room; older ones as they are rewritten.
ALTER TABLE lineage_nodes SET (fillfactor = 70);
ALTER TABLE lineage_facets SET (fillfactor = 70);
ALTER TABLE lineage_aliases SET (fillfactor = 70);
ALTER TABLE lineage_edges SET (fillfactor = 85);
