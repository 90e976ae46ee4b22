-- How a session's queued prompts reach the model: '' (the default, one
-- at a time), 'one_at_a_time' or 'all'. Messages a rollback took out of
-- the working history need no column: each stored message carries its
-- rolled_back flag in its own protobuf.
ALTER TABLE sessions ADD COLUMN queue_mode text NOT NULL DEFAULT '';
