-- A session's inline scripted model (raw JSON, verbatim), so a session
-- created with an inline script can be restored.
ALTER TABLE sessions ADD COLUMN script json;
