-- A session's sub-agent options and its depth (raw JSON, verbatim): what
-- the children its subagent tool starts may have, and how deep it nests.
ALTER TABLE sessions ADD COLUMN subagents TEXT;
