-- Column lineage (issue 43, item 1): the `columnLineage` facet of each
-- dataset read into column edges, for field-level impact. Derived like
-- the rest of the graph (a rebuild empties and refills both tables); the
-- facet itself stays in lineage_facets as sent.

-- Which version of a dataset's column lineage the edges below are: the
-- time of the event whose facet the fold kept (newest wins, a tombstone
-- included, as for every facet), so batches merge in any order.
CREATE TABLE lineage_column_versions (
    namespace TEXT        NOT NULL,
    name      TEXT        NOT NULL,
    at        TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (namespace, name)
);

-- src dataset.field → dst dataset.field. Keyed by names, not node ids: a
-- facet may name an input no event did (kept, and shown as unknown).
CREATE TABLE lineage_column_edges (
    dst_namespace TEXT   NOT NULL,
    dst_name      TEXT   NOT NULL,
    dst_field     TEXT   NOT NULL,
    src_namespace TEXT   NOT NULL,
    src_name      TEXT   NOT NULL,
    src_field     TEXT   NOT NULL,
    kind          TEXT   NOT NULL CHECK (kind IN ('DIRECT', 'INDIRECT')),
    subtypes      TEXT[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (dst_namespace, dst_name, dst_field, src_namespace, src_name, src_field)
);
-- Downstream walks start from a field.
CREATE INDEX lineage_column_edges_by_src
    ON lineage_column_edges (src_namespace, src_name, src_field);
