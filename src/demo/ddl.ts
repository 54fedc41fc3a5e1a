/**
 * The subset of Discourse's schema the audit reads (docs/design.md#discourse), used to build the embedded demo
 * database and the test databases. Column names and meanings follow Discourse; only what the
 * audit needs is here.
 */
export const FORUM_DDL = `
CREATE TABLE categories (id integer PRIMARY KEY, name text NOT NULL, slug text NOT NULL, read_restricted boolean NOT NULL DEFAULT false);
CREATE TABLE users (id integer PRIMARY KEY, username text NOT NULL UNIQUE);
CREATE TABLE topics (
  id integer PRIMARY KEY, title text NOT NULL, slug text NOT NULL, category_id integer REFERENCES categories(id),
  archetype text NOT NULL DEFAULT 'regular', visible boolean NOT NULL DEFAULT true, deleted_at timestamp,
  posts_count integer NOT NULL DEFAULT 0, created_at timestamp NOT NULL DEFAULT '2025-01-01');
CREATE TABLE posts (
  id integer PRIMARY KEY, topic_id integer NOT NULL REFERENCES topics(id), post_number integer NOT NULL,
  raw text NOT NULL, cooked text NOT NULL, user_id integer REFERENCES users(id), reply_to_post_number integer,
  post_type integer NOT NULL DEFAULT 1, hidden boolean NOT NULL DEFAULT false, deleted_at timestamp,
  created_at timestamp NOT NULL DEFAULT '2025-01-01', UNIQUE (topic_id, post_number));
CREATE TABLE tags (id integer PRIMARY KEY, name text NOT NULL UNIQUE);
CREATE TABLE topic_tags (topic_id integer NOT NULL REFERENCES topics(id), tag_id integer NOT NULL REFERENCES tags(id), PRIMARY KEY (topic_id, tag_id));
CREATE TABLE post_search_data (post_id integer PRIMARY KEY REFERENCES posts(id), search_data tsvector, raw_data text, locale text);
CREATE TABLE topic_search_data (topic_id integer PRIMARY KEY REFERENCES topics(id), search_data tsvector, raw_data text, locale text);
CREATE INDEX post_search_idx ON post_search_data USING gin (search_data);
CREATE INDEX topic_search_idx ON topic_search_data USING gin (search_data);
`;

/** discourse-ai's embedding tables (pgvector's halfvec; dimension fixed per query by a cast). */
export const EMBEDDINGS_DDL = `
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE ai_posts_embeddings (
  post_id integer NOT NULL, model_id integer NOT NULL, model_version integer NOT NULL DEFAULT 1,
  strategy_id integer NOT NULL, strategy_version integer NOT NULL DEFAULT 1, digest text,
  embeddings halfvec NOT NULL, created_at timestamp NOT NULL DEFAULT now(), updated_at timestamp NOT NULL DEFAULT now(),
  UNIQUE (model_id, strategy_id, post_id));
CREATE TABLE ai_topics_embeddings (
  topic_id integer NOT NULL, model_id integer NOT NULL, model_version integer NOT NULL DEFAULT 1,
  strategy_id integer NOT NULL, strategy_version integer NOT NULL DEFAULT 1, digest text,
  embeddings halfvec NOT NULL, created_at timestamp NOT NULL DEFAULT now(), updated_at timestamp NOT NULL DEFAULT now(),
  UNIQUE (model_id, strategy_id, topic_id));
`;
