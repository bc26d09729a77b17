-- Lineage (issue 14): the graph tables name their nodes and runs without
-- foreign keys. Each key check is a query with a row lock, run per row:
-- `auto_explain` of the ingest batch statement showed the five checks of
-- one event (an edge's two ends, a run's job) taking half the statement's
-- time (BENCHMARKS, "eighth pass"). What the keys guarded holds by
-- construction instead:
-- - Only `store::write` adds rows, in one statement that names every node
--   by an id its own node upsert returned in that statement (a subscript
--   past the batch's nodes is NULL, which NOT NULL refuses), and writes a
--   run's facets only with the run.
-- - Nothing deletes a node or a run: the graph is only emptied whole
--   (`store::clear_graph`, one TRUNCATE of every graph table).
ALTER TABLE lineage_facets DROP CONSTRAINT lineage_facets_node_id_fkey;
ALTER TABLE lineage_edges DROP CONSTRAINT lineage_edges_src_fkey;
ALTER TABLE lineage_edges DROP CONSTRAINT lineage_edges_dst_fkey;
ALTER TABLE lineage_runs DROP CONSTRAINT lineage_runs_job_id_fkey;
ALTER TABLE lineage_run_facets DROP CONSTRAINT lineage_run_facets_run_id_fkey;
ALTER TABLE lineage_aliases DROP CONSTRAINT lineage_aliases_dataset_id_fkey;
