-- Runbook corpus behind knowledge.cite (package knowledge). The corpus lives
-- in the repository (knowledge/corpus/*.md); knowledge.Load copies it here
-- once per corpus version (a content hash, also the ruleset version written
-- into evidence), so several versions can coexist during a rolling deploy and
-- every query names the version it reads.
-- +goose Up
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE knowledge_corpus (
    version       text PRIMARY KEY CHECK (version ~ '^kb-[0-9a-f]{16}$'),
    section_count integer NOT NULL CHECK (section_count > 0),
    loaded_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE knowledge_sections (
    corpus_version text NOT NULL REFERENCES knowledge_corpus (version) ON DELETE CASCADE,
    section_id     text NOT NULL,
    path           text NOT NULL,
    title          text NOT NULL,
    url            text NOT NULL CHECK (url ~ '^https://'),
    section        text NOT NULL,
    keys           text[] NOT NULL DEFAULT '{}',
    -- keys joined by spaces (array_to_string is not immutable, so the
    -- generated column below cannot compute it itself).
    keys_text      text NOT NULL DEFAULT '',
    body           text NOT NULL,
    -- title, section and keys in one lower-case line: the trigram target for
    -- short, key-like claims ("ssn last 4", "tos_acceptance.ip").
    search_head    text NOT NULL,
    -- Dots, underscores and slashes become spaces before parsing, so that
    -- individual.verification.document yields the words individual,
    -- verification, document instead of one host-name token.
    tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', regexp_replace(title, '[._/]+', ' ', 'g')), 'A') ||
        setweight(to_tsvector('english', regexp_replace(keys_text, '[._/]+', ' ', 'g')), 'A') ||
        setweight(to_tsvector('english', regexp_replace(section, '[._/]+', ' ', 'g')), 'B') ||
        setweight(to_tsvector('english', regexp_replace(body, '[._/]+', ' ', 'g')), 'C')
    ) STORED,
    PRIMARY KEY (corpus_version, section_id)
);

-- Full text (@@) and trigram (%, <%, %>) operators can use these. Today's
-- search ranks every section of one version (about 40 rows) by
-- word_similarity, which the planner answers with the primary key scan; the
-- trigram indexes are there for operator-based prefiltering once the corpus
-- grows past a few hundred sections.
CREATE INDEX knowledge_sections_tsv_idx ON knowledge_sections USING gin (tsv);
CREATE INDEX knowledge_sections_head_trgm_idx ON knowledge_sections USING gin (search_head gin_trgm_ops);
CREATE INDEX knowledge_sections_body_trgm_idx ON knowledge_sections USING gin (body gin_trgm_ops);

-- +goose Down
-- pg_trgm stays: other schemas may use it, and dropping an extension is not
-- this migration's to decide.
DROP TABLE knowledge_sections;
DROP TABLE knowledge_corpus;
