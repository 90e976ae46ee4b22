-- A session's context options (raw JSON, verbatim), and where its working
-- history starts: the messages before history_start are the ones
-- compaction replaced, kept for get_messages with all.
ALTER TABLE sessions ADD COLUMN context json;
ALTER TABLE sessions ADD COLUMN history_start integer NOT NULL DEFAULT 0 CHECK (history_start >= 0);
