-- The catalog: a topic is a stream with an owner, a domain, an SLA tier, a
-- freshness budget and an expected message interval. Topics the sampler
-- discovers have no row here until someone describes or claims them.
CREATE TABLE streams (
    cluster_id          BIGINT      NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    topic               TEXT        NOT NULL,
    owner_team_id       BIGINT      REFERENCES teams (id) ON DELETE SET NULL,
    domain              TEXT        NOT NULL DEFAULT '',
    -- 1: 99.9 %, 2: 99.5 %, 3: 99.0 %.
    tier                SMALLINT    CHECK (tier BETWEEN 1 AND 3),
    -- Time lag a consumer of this stream may have, in seconds.
    freshness_budget_s  INTEGER     CHECK (freshness_budget_s > 0),
    -- How often a message is expected; quiet beyond 1.5× this is flagged.
    expected_interval_s INTEGER     CHECK (expected_interval_s > 0),
    description         TEXT        NOT NULL DEFAULT '',
    updated_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (cluster_id, topic)
);

-- When a topic's log end last moved forward, for "time since the last message".
ALTER TABLE topics ADD COLUMN last_advanced_at TIMESTAMPTZ;
