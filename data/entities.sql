-- The entity graph of agent sessions, derived from git history by `gitstate situations`.
-- One-way: gitstate writes it and never reads it back; rows are upserted, never deleted, so
-- history survives state files being deleted later.

CREATE TABLE IF NOT EXISTS entities (
    id         TEXT PRIMARY KEY,  -- situation:session-<agent>, agent:<model>, person:<person>,
                                  -- role:<role>, situation:<project>
    type       TEXT NOT NULL,     -- situation | agent | person | role
    name       TEXT NOT NULL,
    started_at TEXT,              -- a session's temporal bounds: first and last state commit
    ended_at   TEXT,              -- (ISO 8601, UTC)
    quality    TEXT               -- a session's state: live | frozen | dead
);

CREATE TABLE IF NOT EXISTS belongings (
    member  TEXT NOT NULL,        -- an entity id, or text:summary / text:final_summary
    owner   TEXT NOT NULL REFERENCES entities(id),
    quality TEXT NOT NULL,        -- actor | method | domain | description
    value   TEXT,                 -- the text of a description
    PRIMARY KEY (member, owner, quality)
);

CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT
);
