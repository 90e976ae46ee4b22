-- The user a session belongs to (the HTTP server's caller); '' for
-- sessions made without one. Lists of one user's sessions page by
-- (user_name, updated_at DESC, id DESC).
ALTER TABLE sessions ADD COLUMN user_name TEXT NOT NULL DEFAULT '';
CREATE INDEX sessions_by_user ON sessions (user_name, updated_at DESC, id DESC);
