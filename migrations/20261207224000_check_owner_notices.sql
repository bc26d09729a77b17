-- "Notify owners" of a producer change's downstream breakage (issue 43):
-- each notice sent of a check, to which teams, by whom, how many channel
-- messages it became.
CREATE TABLE check_owner_notices (
    id        BIGSERIAL   PRIMARY KEY,
    check_id  BIGINT      NOT NULL REFERENCES compatibility_checks (id) ON DELETE CASCADE,
    sent_by   TEXT        NOT NULL,
    sent_at   TIMESTAMPTZ NOT NULL,
    teams     TEXT[]      NOT NULL,
    messages  INTEGER     NOT NULL
);
CREATE INDEX check_owner_notices_check ON check_owner_notices (check_id, id DESC);
