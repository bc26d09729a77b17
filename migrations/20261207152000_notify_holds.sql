-- A transition held by a silence is not looked at again until the silence
-- ends (ending or adding a silence releases the holds to be judged anew):
-- a long silence over many open flags must not fill every fan-out batch
-- with rows it can only hold again, starving newer transitions.
ALTER TABLE notify_transitions ADD COLUMN held_until TIMESTAMPTZ;
DROP INDEX notify_transitions_pending;
CREATE INDEX notify_transitions_pending ON notify_transitions (id)
    WHERE fanned_out_at IS NULL;
CREATE INDEX notify_transitions_held ON notify_transitions (held_until)
    WHERE fanned_out_at IS NULL AND held_until IS NOT NULL;
-- Undelivered messages of a channel, oldest first: a channel's messages
-- about one flag go out in the order they were queued.
CREATE INDEX deliveries_channel_waiting ON deliveries (channel_id, id)
    WHERE delivered_at IS NULL AND failed_at IS NULL AND channel_id IS NOT NULL;
