import { RagauditError } from '../errors.js';
import type { AnnOptions } from './ann.js';
import type { QueryOptions, SqlClient } from '../db/sql-client.js';

/**
 * What the Discourse profile (src/corpus/discourse.ts) is asked and answers: the semantic and
 * keyword queries (single and batched), a statement as doctor EXPLAINs it, and where discourse-ai
 * keeps its vectors. The retrieved item itself is the results model's (src/model/retrieved-item.ts).
 */

export interface SemanticQuery extends AnnOptions {
  vector: string;
  dimensions: number;
  modelId: number;
  strategyId: number;
  /** pgvector operator: `<=>` cosine distance (default) or `<#>` negative inner product. */
  operator?: '<=>' | '<#>';
  limit: number;
  /** Topics with more posts than this are left out (size routing); null = no limit. */
  maxPostsCount?: number | null;
}

export interface KeywordQuery {
  text: string;
  /** Text-search configuration, e.g. `english` or `french`. */
  config: string;
  limit: number;
  maxPostsCount?: number | null;
}

/** How a batched semantic statement is shaped (see `DiscourseProfile.batchShape`); default by database kind. */
export type BatchShape = 'lateral' | 'shared';

export interface SemanticBatchQuery extends Omit<SemanticQuery, 'vector'> {
  /** One query vector (pgvector text form) per question. */
  vectors: string[];
  shape?: BatchShape;
}

export interface KeywordBatchQuery extends Omit<KeywordQuery, 'text'> {
  /** One question per list. */
  texts: string[];
}

/** One statement as the profile sends it: where, what, with which parameters and settings (doctor EXPLAINs it). */
export interface Statement {
  db: SqlClient;
  sql: string;
  params: unknown[];
  settings?: QueryOptions['settings'];
}

/** A schema name as config and flags accept it (it is spliced into SQL as a quoted identifier). */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** discourse-ai's embedding table of a grain, schema-qualified when a schema is named. */
export function embeddingsTable(grain: 'post' | 'topic', schema?: string): string {
  if (schema === undefined) return `ai_${grain}s_embeddings`;
  if (!SCHEMA_NAME.test(schema)) throw new RagauditError(`not a schema name: ${JSON.stringify(schema)}`);
  return `"${schema}".ai_${grain}s_embeddings`;
}
