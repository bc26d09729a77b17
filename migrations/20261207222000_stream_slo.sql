-- Freshness SLOs (issue 42): per stream, the seconds the passes judged it
-- fresh and stale (src/watch/slo.rs); time no pass judged is "not known"
-- and has no row. Per minute for the burn-rate windows (kept a day), per
-- hour for the month's tally (kept as long as the lag rollups): never a
-- row a sample. Expired with the lag rollups (watch/store/samples.rs).
CREATE TABLE stream_slo_1m (
    cluster_id BIGINT      NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    topic      TEXT        NOT NULL,
    bucket     TIMESTAMPTZ NOT NULL,
    fresh_s    INTEGER     NOT NULL DEFAULT 0 CHECK (fresh_s >= 0),
    stale_s    INTEGER     NOT NULL DEFAULT 0 CHECK (stale_s >= 0),
    PRIMARY KEY (cluster_id, topic, bucket)
);

CREATE TABLE stream_slo_1h (LIKE stream_slo_1m INCLUDING ALL);
ALTER TABLE stream_slo_1h ADD FOREIGN KEY (cluster_id) REFERENCES clusters (id) ON DELETE CASCADE;
