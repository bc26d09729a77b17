-- Lineage (issue 14): node keys in memory beside the adjacency, kept
-- current the same way (see 20261201000024_lineage_speed.sql): the
-- transaction that first wrote the node. An upsert never changes it, and
-- a node's key never changes for its id (a rebuild bumps the generation).
ALTER TABLE lineage_nodes
    ADD COLUMN added_xid BIGINT NOT NULL DEFAULT (pg_current_xact_id()::text::bigint);
CREATE INDEX lineage_nodes_by_added_xid ON lineage_nodes (added_xid);
