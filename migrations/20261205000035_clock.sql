-- A clock the demo's history player can move (issue 15: the demo's pilot
-- history is played through the real code paths, each step at the time
-- its script gives). `streamkeeper_now()` is `now()` plus the session's
-- `streamkeeper.clock_offset_ms`, which only the player's own connections
-- set (server/src/platform/clock.rs): the serving process never sets it, so
-- for it this is `now()`. An SQL function, STABLE and without SET clauses,
-- so the planner inlines it like `now()` itself.
CREATE FUNCTION streamkeeper_now() RETURNS TIMESTAMPTZ LANGUAGE sql STABLE AS
$$ SELECT now() + make_interval(secs => COALESCE(
       NULLIF(current_setting('streamkeeper.clock_offset_ms', true), '')::double precision, 0) / 1000) $$;

-- The stamps the pilot reads, where a column's default sets them (the
-- others are set by store SQL or the services, on the same clock).
ALTER TABLE flags ALTER COLUMN raised_at SET DEFAULT streamkeeper_now(),
    ALTER COLUMN updated_at SET DEFAULT streamkeeper_now();
ALTER TABLE review_items ALTER COLUMN created_at SET DEFAULT streamkeeper_now(),
    ALTER COLUMN updated_at SET DEFAULT streamkeeper_now();
ALTER TABLE review_approvals ALTER COLUMN approved_at SET DEFAULT streamkeeper_now();
ALTER TABLE connector_restarts ALTER COLUMN at SET DEFAULT streamkeeper_now();
-- A flag's webhook is due when the flag is raised, on the flag's clock:
-- its delivery stamps the flag's notified_at (flags/store.rs).
ALTER TABLE deliveries ALTER COLUMN next_attempt_at SET DEFAULT streamkeeper_now();
