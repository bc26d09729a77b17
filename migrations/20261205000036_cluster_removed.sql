-- A removed cluster is no longer watched and is gone from every list and
-- page, but its history (flags, review items, checks, samples) stays for
-- the retention period, so a removal by mistake can be undone and the
-- pilot's figures of the past keep their facts. Hourly housekeeping
-- deletes the row, and by cascade its history, once the period is over.
ALTER TABLE clusters
    ADD COLUMN removed_at TIMESTAMPTZ,
    ADD COLUMN removed_by TEXT,
    -- A restored cluster's lag windows start here: passes from before its
    -- removal are history, not the recent past a window judges.
    ADD COLUMN window_from TIMESTAMPTZ,
    ADD CONSTRAINT clusters_removed_by CHECK ((removed_at IS NULL) = (removed_by IS NULL));

-- A removed cluster's name is free for a new one: unique among the live.
ALTER TABLE clusters DROP CONSTRAINT clusters_name_key;
CREATE UNIQUE INDEX clusters_live_name ON clusters (name) WHERE removed_at IS NULL;
-- Housekeeping looks for removed clusters past the period.
CREATE INDEX clusters_removed_at ON clusters (removed_at) WHERE removed_at IS NOT NULL;
