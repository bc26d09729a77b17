-- The replicas of one installation (server/src/platform/routine/share.rs):
-- each writes its heartbeat every two seconds, so every replica knows how
-- many are alive and takes only its fair share of the per-cluster
-- routines; the version shows a rolling upgrade on Settings → Routines.
CREATE TABLE routine_replicas (
    holder     TEXT        PRIMARY KEY,
    version    TEXT        NOT NULL,
    started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    seen_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
