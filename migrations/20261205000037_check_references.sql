-- A check keeps the references it was made with, so proposing it from its
-- report (the page, `POST /api/v1/schema-checks/{id}/proposals`, the CLI's
-- `schemas check --propose`) carries them (issue 11): registered ones
-- become the review item's references; ones pasted as text are named, so
-- a proposal that cannot carry them says so instead of losing them.
ALTER TABLE compatibility_checks
    ADD COLUMN subject_references JSONB NOT NULL DEFAULT '[]',
    ADD COLUMN pasted_references TEXT[] NOT NULL DEFAULT '{}';
