-- A paused cluster is not watched: its per-cluster routines skip it until
-- it is resumed, and its pages say since when and by whom instead of
-- showing its last figures as current.
ALTER TABLE clusters
    ADD COLUMN paused_at TIMESTAMPTZ,
    ADD COLUMN paused_by TEXT,
    ADD CONSTRAINT clusters_paused_by CHECK ((paused_at IS NULL) = (paused_by IS NULL));
