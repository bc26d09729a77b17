-- Lag samples move to daily range partitions on `at`: retention drops a
-- whole day at once instead of deleting row by row, and each day's indexes
-- stay small. The watcher creates partitions two days ahead (see
-- server/src/store/samples.rs); the DEFAULT partition catches a row no day
-- partition takes, so an insert never fails and nothing is lost.
--
-- The foreign keys are dropped on purpose: they cost a lookup per row at
-- ingest (hundreds of thousands of rows a pass on a large cluster), and
-- samples leave by partition drop, not by cascade. Deleting a cluster
-- deletes its samples explicitly.
ALTER TABLE lag_samples RENAME TO lag_samples_unpartitioned;
ALTER INDEX lag_samples_at RENAME TO lag_samples_unpartitioned_at;
ALTER INDEX lag_samples_group RENAME TO lag_samples_unpartitioned_group;

-- One row per group and topic per pass, its partitions side by side in
-- arrays (element i of each array is partition partitions[i]): a pass of
-- 1,000 groups over 50,000 partitions is 1,000 rows, not 50,000, which is
-- what lets ingest keep up with large clusters (BENCHMARKS.md). NULL
-- elements keep their meaning: never committed, or not readable.
CREATE TABLE lag_samples (
    cluster_id BIGINT      NOT NULL,
    pass_id    BIGINT      NOT NULL,
    at         TIMESTAMPTZ NOT NULL,
    group_name TEXT        NOT NULL,
    topic      TEXT        NOT NULL,
    partitions INTEGER[]   NOT NULL,
    committed  BIGINT[]    NOT NULL,
    log_start  BIGINT[]    NOT NULL,
    log_end    BIGINT[]    NOT NULL
) PARTITION BY RANGE (at);
CREATE INDEX lag_samples_at ON lag_samples USING brin (at);
CREATE INDEX lag_samples_group ON lag_samples (cluster_id, group_name, pass_id);
CREATE TABLE lag_samples_default PARTITION OF lag_samples DEFAULT;

-- Day partitions for the rows already stored, then the rows themselves.
DO $$
DECLARE
    d DATE;
BEGIN
    FOR d IN SELECT DISTINCT (at AT TIME ZONE 'UTC')::date FROM lag_samples_unpartitioned LOOP
        EXECUTE format(
            'CREATE TABLE lag_samples_p%s PARTITION OF lag_samples FOR VALUES FROM (%L) TO (%L)',
            to_char(d, 'YYYYMMDD'),
            (d::timestamp AT TIME ZONE 'UTC'),
            ((d + 1)::timestamp AT TIME ZONE 'UTC'));
    END LOOP;
END $$;
INSERT INTO lag_samples
SELECT cluster_id, pass_id, at, group_name, topic,
       array_agg(partition ORDER BY partition), array_agg(committed ORDER BY partition),
       array_agg(log_start ORDER BY partition), array_agg(log_end ORDER BY partition)
FROM lag_samples_unpartitioned
GROUP BY cluster_id, pass_id, at, group_name, topic;
DROP TABLE lag_samples_unpartitioned;

-- A group's total lag per minute and per hour, written with each pass, for
-- the 24-hour and 7-day charts. A bucket with no row had no readable pass
-- for the group: the chart draws it as a gap.
CREATE TABLE lag_rollup_1m (
    cluster_id BIGINT      NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    group_name TEXT        NOT NULL,
    bucket     TIMESTAMPTZ NOT NULL,
    lag_max    BIGINT      NOT NULL,
    lag_sum    BIGINT      NOT NULL,
    samples    INTEGER     NOT NULL,
    PRIMARY KEY (cluster_id, group_name, bucket)
);
CREATE TABLE lag_rollup_1h (LIKE lag_rollup_1m INCLUDING ALL);
ALTER TABLE lag_rollup_1h ADD FOREIGN KEY (cluster_id) REFERENCES clusters (id) ON DELETE CASCADE;

-- Each group's latest judgement, written by the evaluation after each pass,
-- so lists of thousands of groups are one indexed read, not an evaluation
-- per group per page view.
ALTER TABLE consumer_groups
    ADD COLUMN status        TEXT,
    ADD COLUMN total_lag     BIGINT,
    ADD COLUMN max_time_lag_s DOUBLE PRECISION,
    ADD COLUMN evaluated_at  TIMESTAMPTZ,
    -- When the cluster stopped listing the group (deleted, or expired after
    -- its offsets' retention); NULL while it is listed.
    ADD COLUMN gone_since    TIMESTAMPTZ;
CREATE INDEX consumer_groups_status ON consumer_groups (cluster_id, status, name);
