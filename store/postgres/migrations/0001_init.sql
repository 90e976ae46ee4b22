-- Sessions: one row per session, the record and its volatile state.
CREATE TABLE sessions (
    id                  text             NOT NULL PRIMARY KEY,
    model               text             NOT NULL DEFAULT '',
    system              text             NOT NULL DEFAULT '',
    tools               text[]           NOT NULL DEFAULT '{}',
    plugins             json,                                -- raw JSON, verbatim
    state               text             NOT NULL DEFAULT 'idle',
    message_count       integer          NOT NULL DEFAULT 0 CHECK (message_count >= 0),
    input_tokens        bigint           NOT NULL DEFAULT 0,
    output_tokens       bigint           NOT NULL DEFAULT 0,
    total_tokens        bigint           NOT NULL DEFAULT 0,
    cached_input_tokens bigint           NOT NULL DEFAULT 0,
    reasoning_tokens    bigint           NOT NULL DEFAULT 0,
    cost_usd            double precision NOT NULL DEFAULT 0,
    event_seq           bigint           NOT NULL DEFAULT 0,
    volatile            bytea            NOT NULL DEFAULT '', -- storepb.Volatile
    owner               text             NOT NULL DEFAULT '', -- lease holder, '' when none
    lease_expires       timestamptz,                         -- NULL when owner is ''
    created_at          timestamptz      NOT NULL,
    updated_at          timestamptz      NOT NULL
);

-- List pages by (updated_at DESC, id DESC).
CREATE INDEX sessions_by_update ON sessions (updated_at DESC, id DESC);

-- Messages: the committed history, one protobuf eventsv1.Message per row.
CREATE TABLE messages (
    session_id text    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    idx        integer NOT NULL CHECK (idx >= 0),
    data       bytea   NOT NULL,
    PRIMARY KEY (session_id, idx)
);
