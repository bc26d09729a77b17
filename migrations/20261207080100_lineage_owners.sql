-- A lineage node's owner as an admin or that team set it (issue 45, item
-- 1; `streamkeeper::access::ownership::of_node`). Keyed by the node's key,
-- not its id: a rebuild renumbers every node and must keep what people set.
CREATE TABLE lineage_owners (
    kind      TEXT        NOT NULL CHECK (kind IN ('dataset', 'job')),
    namespace TEXT        NOT NULL,
    name      TEXT        NOT NULL,
    team_id   BIGINT      NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    set_by    TEXT        NOT NULL,
    set_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (kind, namespace, name)
);
