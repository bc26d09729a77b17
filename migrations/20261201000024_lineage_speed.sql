-- Lineage (issue 14): impact from an in-memory adjacency kept current by
-- what each question reads of the edges table since it last looked.

-- The transaction that first wrote the edge (pg_current_xact_id, as a
-- bigint). An upsert never changes it. A replica remembers the snapshot
-- of its last read (xmax, and xip: the transactions running then) and
-- next asks for the edges of transactions at or past xmax or in xip:
-- every other one had ended, so its edges were in that read. This holds
-- whatever order concurrent writers commit in (a high-water mark on a
-- sequence would skip a transaction that commits after a later one).
ALTER TABLE lineage_edges
    ADD COLUMN added_xid BIGINT NOT NULL DEFAULT (pg_current_xact_id()::text::bigint);
CREATE INDEX lineage_edges_by_added_xid ON lineage_edges (added_xid);

-- Bumped by `lineage rebuild` in its transaction: node ids change, so a
-- replica that sees a new generation loads the edges again.
CREATE TABLE lineage_state (
    only_row   BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
    generation BIGINT  NOT NULL DEFAULT 0
);
INSERT INTO lineage_state DEFAULT VALUES;

-- "Notify owners" (issue 14 item 4): a lineage question asked and
-- answered, and when its answer was sent to the owner teams, for the
-- pilot's "stream lineage question answered" metric.
CREATE TABLE lineage_questions (
    id          BIGSERIAL   PRIMARY KEY,
    -- The nodeId asked about, and which way.
    node        TEXT        NOT NULL,
    direction   TEXT        NOT NULL CHECK (direction IN ('downstream', 'upstream')),
    asked_by    TEXT        NOT NULL,
    asked_at    TIMESTAMPTZ NOT NULL,
    answered_at TIMESTAMPTZ NOT NULL,
    notified_at TIMESTAMPTZ,
    -- Nodes reached, whether the answer was cut, the owner teams told.
    reached     INTEGER     NOT NULL,
    partial     BOOLEAN     NOT NULL,
    teams       TEXT[]      NOT NULL,
    -- The answer as sent (the impact API's shape).
    answer      JSONB       NOT NULL
);
CREATE INDEX lineage_questions_asked ON lineage_questions (asked_at DESC);

-- The inbox line and the webhook of a question sent to its owners.
ALTER TABLE notifications
    ADD COLUMN lineage_question_id BIGINT REFERENCES lineage_questions (id) ON DELETE CASCADE;
ALTER TABLE deliveries
    ADD COLUMN lineage_question_id BIGINT REFERENCES lineage_questions (id) ON DELETE CASCADE;
ALTER TABLE deliveries DROP CONSTRAINT deliveries_for_one;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_for_one
    CHECK (num_nonnulls(flag_id, review_item_id, lineage_question_id) = 1);
