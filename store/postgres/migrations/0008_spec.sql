-- A session's settings besides its model and user — system prompt,
-- tools, plugins, inline script, context, sub-agent and queue options —
-- as one JSON object, which package spec writes and reads and the store
-- keeps verbatim: a new setting needs no column. Every row's object is
-- made from the columns it replaces, under spec's keys; an empty or NULL
-- column becomes "", [] or null, which spec reads as unset.
ALTER TABLE sessions ADD COLUMN spec json;
UPDATE sessions SET spec = json_build_object(
    'script', script,
    'system', system,
    'tools', to_json(tools),
    'plugins', plugins,
    'context', context,
    'subagents', subagents,
    'queue_mode', queue_mode);
ALTER TABLE sessions
    DROP COLUMN system,
    DROP COLUMN tools,
    DROP COLUMN plugins,
    DROP COLUMN script,
    DROP COLUMN context,
    DROP COLUMN subagents,
    DROP COLUMN queue_mode;
