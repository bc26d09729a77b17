-- Who may read a review item or a schema check comes from what admins
-- assigned (a domain's named approvers) and from what was true when it was
-- made (the stream's owner team and domain then), never from a row an
-- owner can edit now.
ALTER TABLE review_items ADD COLUMN owner_team_id BIGINT REFERENCES teams (id) ON DELETE SET NULL;
UPDATE review_items i SET owner_team_id = s.owner_team_id
    FROM streams s WHERE s.cluster_id = i.cluster_id AND s.topic = i.topic;

ALTER TABLE compatibility_checks
    ADD COLUMN owner_team_id BIGINT REFERENCES teams (id) ON DELETE SET NULL,
    ADD COLUMN domain TEXT NOT NULL DEFAULT '';
UPDATE compatibility_checks c SET owner_team_id = s.owner_team_id, domain = s.domain
    FROM streams s WHERE s.cluster_id = c.cluster_id AND s.topic = c.topic;
