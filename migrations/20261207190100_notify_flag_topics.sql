-- The topics a group's flag is about, fixed at its first transition (its
-- raise): Alertmanager knows an alert by its labels, so the `topic` label
-- of a flag's alert must not grow when the group starts reading another
-- topic while the flag is open (issue 40). Flags raised before this keep
-- reading the group's current topics.
CREATE TABLE notify_flag_topics (
    flag_id BIGINT PRIMARY KEY REFERENCES flags (id) ON DELETE CASCADE,
    topics  TEXT[] NOT NULL
);
