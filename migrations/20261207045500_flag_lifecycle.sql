-- Flags own their lifecycle (issue 45): a dismissal says why and may
-- snooze, and holds its trouble back until the trouble clears or the
-- snooze ends; each delivery is one transition with its idempotency key.

ALTER TABLE flags
    -- Why it was dismissed: the flag was wrong, or the trouble expected.
    ADD COLUMN dismissal     TEXT CHECK (dismissal IN ('wrong', 'expected')),
    -- A dismissal with a snooze holds its trouble back until then.
    ADD COLUMN snoozed_until TIMESTAMPTZ,
    -- When a dismissal stopped holding its trouble back: the trouble
    -- cleared, or the snooze ended (the trouble is then raised again).
    ADD COLUMN released_at   TIMESTAMPTZ;

-- Dismissals before this one never held anything back; the pilot counted
-- them all as wrong.
UPDATE flags SET dismissal = 'wrong', released_at = dismissed_at WHERE state = 'dismissed';

-- One dismissal holding a trouble back at a time, and the passes read them
-- with the live flags.
CREATE UNIQUE INDEX flags_one_held ON flags (cluster_id, subject_kind, subject, rule)
    WHERE state = 'dismissed' AND released_at IS NULL;

ALTER TABLE deliveries
    -- Which transition of its flag a delivery tells: raise, worsen,
    -- resolve, restart; a notice for review items and questions.
    ADD COLUMN transition      TEXT NOT NULL DEFAULT 'notice',
    -- Sent as the Idempotency-Key header, the same on every retry, so a
    -- receiver can drop a repeat.
    ADD COLUMN idempotency_key TEXT NOT NULL DEFAULT gen_random_uuid()::text UNIQUE,
    -- A replica that claimed the delivery sends it until then; each claim,
    -- send and record is its own short transaction, never one held across
    -- the HTTP post.
    ADD COLUMN claimed_until   TIMESTAMPTZ;

UPDATE deliveries SET transition = 'raise'
 WHERE flag_id IS NOT NULL AND body -> 'flag' ->> 'state' = 'open';
UPDATE deliveries SET transition = 'resolve'
 WHERE flag_id IS NOT NULL AND body -> 'flag' ->> 'state' = 'resolved';
