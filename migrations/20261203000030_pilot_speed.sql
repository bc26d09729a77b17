-- The pilot's reads of a year of records: the few flags dismissed, the few
-- about connectors (restarts) and the few breaking checks, each found by
-- index rather than by reading every flag and check.
CREATE INDEX flags_dismissed ON flags (dismissed_at) WHERE dismissed_at IS NOT NULL;
CREATE INDEX flags_connector ON flags (raised_at) WHERE subject_kind = 'connector';
CREATE INDEX compatibility_checks_breaking ON compatibility_checks (decided_at)
    WHERE verdict = 'INCOMPATIBLE';
