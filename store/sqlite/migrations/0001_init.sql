-- Sessions: one row per session, the record and its volatile state.
-- Times are Unix microseconds (UTC); lease_expires is 0 when owner is ''.
CREATE TABLE sessions (
    id                  TEXT    NOT NULL PRIMARY KEY,
    model               TEXT    NOT NULL DEFAULT '',
    system              TEXT    NOT NULL DEFAULT '',
    tools               TEXT    NOT NULL DEFAULT '[]',  -- JSON array of names
    plugins             TEXT,                            -- raw JSON, verbatim
    state               TEXT    NOT NULL DEFAULT 'idle',
    message_count       INTEGER NOT NULL DEFAULT 0 CHECK (message_count >= 0),
    input_tokens        INTEGER NOT NULL DEFAULT 0,
    output_tokens       INTEGER NOT NULL DEFAULT 0,
    total_tokens        INTEGER NOT NULL DEFAULT 0,
    cached_input_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens    INTEGER NOT NULL DEFAULT 0,
    cost_usd            REAL    NOT NULL DEFAULT 0,
    event_seq           INTEGER NOT NULL DEFAULT 0,
    volatile            BLOB    NOT NULL DEFAULT x'',   -- storepb.Volatile
    owner               TEXT    NOT NULL DEFAULT '',
    lease_expires       INTEGER NOT NULL DEFAULT 0,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL
) STRICT;

-- List pages by (updated_at DESC, id DESC).
CREATE INDEX sessions_by_update ON sessions (updated_at DESC, id DESC);

-- Messages: the committed history, one protobuf eventsv1.Message per row.
CREATE TABLE messages (
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    idx        INTEGER NOT NULL CHECK (idx >= 0),
    data       BLOB    NOT NULL,
    PRIMARY KEY (session_id, idx)
) STRICT, WITHOUT ROWID;
