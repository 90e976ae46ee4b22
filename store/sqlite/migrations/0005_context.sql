-- A session's context options (raw JSON, verbatim), and where its working
-- history starts: the messages before history_start are the ones
-- compaction replaced, kept for get_messages with all.
ALTER TABLE sessions ADD COLUMN context TEXT;
ALTER TABLE sessions ADD COLUMN history_start INTEGER NOT NULL DEFAULT 0;
