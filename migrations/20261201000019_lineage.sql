-- Lineage (issue 14): OpenLineage events as received, and the graph folded
-- from them. The graph is derived: `streamkeeper lineage rebuild` empties
-- it and replays the events, so nothing in it is the only copy of a fact.

-- Every event once, as its canonical bytes after redaction (what the
-- dedup hash covers, and what a rebuild parses again). Text, not JSONB:
-- JSONB reorders nothing we need and refuses the \u0000 escapes a producer
-- may send inside a string. Deduplicated by the hash, never by an index
-- over the body: events reach hundreds of KB (Marquez#1029).
CREATE TABLE lineage_events (
    id          BIGSERIAL   PRIMARY KEY,
    hash        BYTEA       NOT NULL UNIQUE CHECK (length(hash) = 32),
    body        TEXT        NOT NULL,
    -- Who says so: a producer (observed) or Streamkeeper itself (derived).
    -- Kept beside the event, never read from it, which anyone could forge.
    provenance  TEXT        NOT NULL CHECK (provenance IN ('observed', 'derived')),
    kind        TEXT        NOT NULL CHECK (kind IN ('run', 'dataset', 'job')),
    event_time  TIMESTAMPTZ NOT NULL,
    received_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- The account that sent it (a username), or the routine that read it.
    sender      TEXT        NOT NULL,
    -- How it came: 'http' or 'kafka:<cluster id>'.
    source      TEXT        NOT NULL
);

-- Append-only: the raw events are what a rebuild trusts.
CREATE FUNCTION lineage_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'lineage_events is append-only';
END $$;
CREATE TRIGGER lineage_events_append_only BEFORE UPDATE OR DELETE ON lineage_events
    FOR EACH ROW EXECUTE FUNCTION lineage_events_append_only();

-- Datasets and jobs, one table so that an edge is two ids. Each merge
-- rule is the pure fold's (src/lineage/graph.rs): first seen the least,
-- last seen the greatest, per provenance; a job's kind the newest said.
CREATE TABLE lineage_nodes (
    id             BIGSERIAL   PRIMARY KEY,
    kind           TEXT        NOT NULL CHECK (kind IN ('dataset', 'job')),
    namespace      TEXT        NOT NULL,
    name           TEXT        NOT NULL,
    observed_first TIMESTAMPTZ,
    observed_last  TIMESTAMPTZ,
    derived_first  TIMESTAMPTZ,
    derived_last   TIMESTAMPTZ,
    -- Datasets: the registered cluster a Kafka namespace resolved to (the
    -- clusters table's id), every namespace producers used, what is wrong
    -- with the name (kept and shown, never a lost event).
    cluster        TEXT,
    raw_namespaces TEXT[]      NOT NULL DEFAULT '{}',
    issues         JSONB       NOT NULL DEFAULT '[]',
    -- Jobs: the jobType facet's processingType and when it was said.
    job_kind       TEXT        CHECK (job_kind IN ('BATCH', 'STREAMING', 'SERVICE')),
    job_kind_at    TIMESTAMPTZ,
    integration    TEXT,
    UNIQUE (kind, namespace, name)
);
-- "Impact of topic T on cluster C" looks a dataset up by its name.
CREATE INDEX lineage_nodes_by_name ON lineage_nodes (name, kind);

-- Facets as sent (schema, columnLineage, symlinks, ownership, unknown
-- ones), each with the time of the event that set it; NULL is the spec's
-- `_deleted: true`, kept as a tombstone of that time.
CREATE TABLE lineage_facets (
    node_id BIGINT      NOT NULL REFERENCES lineage_nodes (id) ON DELETE CASCADE,
    key     TEXT        NOT NULL,
    at      TIMESTAMPTZ NOT NULL,
    value   JSONB,
    PRIMARY KEY (node_id, key)
);

-- from → to, with first/last seen per provenance: an edge a job stops
-- reporting keeps its last_seen (Marquez keeps only the current version).
CREATE TABLE lineage_edges (
    src            BIGINT      NOT NULL REFERENCES lineage_nodes (id) ON DELETE CASCADE,
    dst            BIGINT      NOT NULL REFERENCES lineage_nodes (id) ON DELETE CASCADE,
    observed_first TIMESTAMPTZ,
    observed_last  TIMESTAMPTZ,
    derived_first  TIMESTAMPTZ,
    derived_last   TIMESTAMPTZ,
    PRIMARY KEY (src, dst)
);
-- Upstream walks follow edges backwards.
CREATE INDEX lineage_edges_by_dst ON lineage_edges (dst, src);

CREATE TABLE lineage_runs (
    run_id              TEXT        PRIMARY KEY,
    job_id              BIGINT      NOT NULL REFERENCES lineage_nodes (id) ON DELETE CASCADE,
    -- The newest state said (an event without eventType reads RUNNING).
    state               TEXT        NOT NULL,
    state_at            TIMESTAMPTZ NOT NULL,
    first_seen          TIMESTAMPTZ NOT NULL,
    last_seen           TIMESTAMPTZ NOT NULL,
    parent_run_id       TEXT,
    parent_job_namespace TEXT,
    parent_job_name     TEXT
);
CREATE INDEX lineage_runs_by_job ON lineage_runs (job_id, last_seen DESC);

CREATE TABLE lineage_run_facets (
    run_id TEXT        NOT NULL REFERENCES lineage_runs (run_id) ON DELETE CASCADE,
    key    TEXT        NOT NULL,
    at     TIMESTAMPTZ NOT NULL,
    value  JSONB,
    PRIMARY KEY (run_id, key)
);

-- `dataset` is also known as (alias_namespace, alias_name): a producer's
-- other namespace, a symlink, Debezium's two-part name. One row per claim,
-- so two datasets claiming one alias are both kept and shown as a
-- conflict, not settled by whoever wrote first (as Marquez does).
CREATE TABLE lineage_aliases (
    alias_namespace TEXT        NOT NULL,
    alias_name      TEXT        NOT NULL,
    dataset_id      BIGINT      NOT NULL REFERENCES lineage_nodes (id) ON DELETE CASCADE,
    -- {"source": "namespace" | "symlink" (with "kind") | "database_prefix"}
    source          JSONB       NOT NULL,
    first_seen      TIMESTAMPTZ NOT NULL,
    last_seen       TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (alias_namespace, alias_name, dataset_id)
);
CREATE INDEX lineage_aliases_by_dataset ON lineage_aliases (dataset_id);
