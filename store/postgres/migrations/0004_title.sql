-- The session's title (the first line of its first prompt); '' until the
-- session has one.
ALTER TABLE sessions ADD COLUMN title text NOT NULL DEFAULT '';
