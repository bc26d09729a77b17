-- Each group's lag trend as its last evaluation judged it (see
-- streamkeeper::watch::lag::trend), for `/metrics` without its window:
-- messages/s the lag grows (negative: shrinks), seconds until caught up
-- (0: caught up; NULL: not catching up or not known), seconds until the
-- log start passes a committed offset (0: it has; NULL: safe or not known).
ALTER TABLE consumer_groups
    ADD COLUMN lag_velocity DOUBLE PRECISION,
    ADD COLUMN catch_up_s DOUBLE PRECISION,
    ADD COLUMN retention_risk_s DOUBLE PRECISION;

-- Topics the group keeps offsets on but no member is assigned, each with
-- when a pass first saw it so (Unix ms; see
-- streamkeeper::watch::lag::consumed): "not consumed since …", left out
-- of its status and lag.
ALTER TABLE consumer_groups ADD COLUMN not_consumed JSONB NOT NULL DEFAULT '{}';
