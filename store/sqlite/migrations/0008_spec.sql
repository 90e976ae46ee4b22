-- A session's settings besides its model and user — system prompt,
-- tools, plugins, inline script, context, sub-agent and queue options —
-- as one JSON object, which package spec writes and reads and the store
-- keeps verbatim: a new setting needs no column. Every row's object is
-- made from the columns it replaces, under spec's keys; an empty or NULL
-- column becomes "", [] or null, which spec reads as unset.
ALTER TABLE sessions ADD COLUMN spec TEXT;
UPDATE sessions SET spec = json_object(
    'script', json(script),
    'system', system,
    'tools', json(tools),
    'plugins', json(plugins),
    'context', json(context),
    'subagents', json(subagents),
    'queue_mode', queue_mode);
ALTER TABLE sessions DROP COLUMN system;
ALTER TABLE sessions DROP COLUMN tools;
ALTER TABLE sessions DROP COLUMN plugins;
ALTER TABLE sessions DROP COLUMN script;
ALTER TABLE sessions DROP COLUMN context;
ALTER TABLE sessions DROP COLUMN subagents;
ALTER TABLE sessions DROP COLUMN queue_mode;
