-- Refusals by unauthenticated sources (cross-site requests, failed and
-- throttled sign-ins, unknown bearer tokens), counted per source, action and
-- minute instead of one chained audit entry each: anyone can send them, so
-- one row per attempt would let anyone grow the undeletable audit log and
-- queue behind its append lock. The hash chain (audit_log) keeps the actions.
CREATE TABLE audit_refusals (
    source   TEXT        NOT NULL,
    action   TEXT        NOT NULL,
    minute   TIMESTAMPTZ NOT NULL,
    -- The latest attempt's actor, target (clipped) and detail.
    actor    TEXT        NOT NULL,
    target   TEXT        NOT NULL,
    detail   TEXT        NOT NULL,
    count    BIGINT      NOT NULL DEFAULT 1 CHECK (count > 0),
    first_at TIMESTAMPTZ NOT NULL,
    last_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (source, action, minute)
);
CREATE INDEX audit_refusals_minute ON audit_refusals USING brin (minute);

-- Like the audit log, nothing is taken back: rows are never deleted, and an
-- update may only count another attempt.
CREATE FUNCTION audit_refusals_only_count() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE'
       AND NEW.source = OLD.source AND NEW.action = OLD.action
       AND NEW.minute = OLD.minute AND NEW.first_at = OLD.first_at
       AND NEW.count > OLD.count AND NEW.last_at >= OLD.last_at THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'audit_refusals only counts attempts: % is not allowed', TG_OP;
END;
$$;

CREATE TRIGGER audit_refusals_no_rewrite
    BEFORE UPDATE OR DELETE ON audit_refusals
    FOR EACH ROW EXECUTE FUNCTION audit_refusals_only_count();
CREATE TRIGGER audit_refusals_no_truncate
    BEFORE TRUNCATE ON audit_refusals
    FOR EACH STATEMENT EXECUTE FUNCTION audit_refusals_only_count();
