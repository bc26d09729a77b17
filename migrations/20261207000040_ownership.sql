-- One ownership rule (issue 45, item 1; `streamkeeper::access::ownership`).
--
-- When a group or connector was claimed, for "claimed by payments on …".
ALTER TABLE consumer_groups ADD COLUMN owner_claimed_at TIMESTAMPTZ;
ALTER TABLE connectors ADD COLUMN owner_claimed_at TIMESTAMPTZ;

-- Who sent a node's latest facet (the event's sender: a username, or the
-- routine that read it). An `ownership` facet names an owner only when its
-- sender may speak for that team; NULL (folded before this column) speaks
-- for nobody.
ALTER TABLE lineage_facets ADD COLUMN sender TEXT;
