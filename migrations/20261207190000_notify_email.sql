-- Email as a team channel kind (issue 40): its endpoint is the recipients
-- (one address or a short comma-separated list), not a URL.
ALTER TABLE notify_channels DROP CONSTRAINT notify_channels_kind_check;
ALTER TABLE notify_channels ADD CONSTRAINT notify_channels_kind_check
    CHECK (kind IN ('slack', 'teams', 'pagerduty', 'alertmanager', 'webhook', 'email'));
ALTER TABLE notify_channels DROP CONSTRAINT notify_channels_endpoint_check;
ALTER TABLE notify_channels ADD CONSTRAINT notify_channels_endpoint_check
    CHECK (endpoint IS NULL OR endpoint ~ '^https?://' OR kind = 'email');
