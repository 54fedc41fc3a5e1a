import type { ChannelConfig } from '../config/schema.js';
import { annCandidates, annSettings, type SearchMode } from '../corpus/ann.js';
import { rowCount, rowsText, type RowCount } from './counts.js';
import type { Statement } from '../corpus/discourse.js';
import type { DoctorContext, Query } from './checks.js';

/**
 * The index part of `doctor` (docs/database.md#what-doctor-reports): which indexes the vector
 * tables and the search-data tables have (from pg_index, pg_class, pg_am and pg_opclass: access
 * method, operator class, the indexed expression with its dimension cast, the partial predicate,
 * the definition and the size), and, per channel, whether the statement the channel really sends
 * (parameters bound, settings set) is planned over one of them: EXPLAIN without ANALYZE.
 */

/** One index of a table, as the catalog describes it. */
export interface IndexInfo {
  name: string;
  /** Access method: hnsw, ivfflat, gin, btree… */
  am: string;
  /** Operator class of the first column, e.g. halfvec_cosine_ops. */
  opclass: string;
  /** The first indexed column or expression, e.g. `(embeddings::halfvec(384))`. */
  expression: string;
  /** The partial index's predicate, or null. */
  predicate: string | null;
  definition: string;
  bytes: number;
  valid: boolean;
}

/** Below this many rows a plan that reads the whole table is the planner's right choice, not a missing index. */
export const SMALL_TABLE_ROWS = 10_000;

/** The indexes of a table (its name as SQL writes it, schema-qualified or not). */
export async function tableIndexes(query: Query, table: string): Promise<IndexInfo[]> {
  const rows = await query<{
    name: string;
    am: string;
    opclass: string | null;
    expression: string;
    predicate: string | null;
    definition: string;
    bytes: string | number;
    valid: boolean;
  }>(
    `SELECT i.relname AS name, am.amname AS am,
       (SELECT opc.opcname FROM pg_opclass opc WHERE opc.oid = x.indclass[0]) AS opclass,
       pg_get_indexdef(x.indexrelid, 1, true) AS expression,
       pg_get_expr(x.indpred, x.indrelid, true) AS predicate,
       pg_get_indexdef(x.indexrelid) AS definition,
       pg_relation_size(x.indexrelid) AS bytes, x.indisvalid AS valid
     FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_am am ON am.oid = i.relam
     WHERE x.indrelid = to_regclass($1::text) ORDER BY i.relname`,
    [table],
  );
  return rows.map((r) => ({ ...r, opclass: r.opclass ?? '?', bytes: Number(r.bytes) }));
}

const isVectorIndex = (i: IndexInfo) => i.am === 'hnsw' || i.am === 'ivfflat' || /embeddings/.test(i.expression);

export function formatBytes(n: number): string {
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(0)} kB`;
  return `${(n / 1024 / 1024).toFixed(n < 100 * 1024 * 1024 ? 1 : 0)} MB`;
}

/** One index in a line: method, operator class, expression (its dimension cast), predicate, size. */
export function describeIndex(i: IndexInfo): string {
  const cast = /::(halfvec|vector|bit|sparsevec)\((\d+)\)/.exec(i.expression);
  return [
    `${i.name}: ${i.am}`,
    `operator class ${i.opclass}`,
    `on ${i.expression}${cast ? ` (${cast[1]}, ${cast[2]} dimensions)` : ''}`,
    i.predicate ? `partial: WHERE ${i.predicate}` : 'not partial',
    formatBytes(i.bytes),
    ...(i.valid ? [] : ['INVALID (a failed concurrent build: the planner ignores it)']),
  ].join(', ');
}

/** Why an index cannot serve a channel's ANN statement, or null when it can (as far as the catalog says). */
export function unfitReason(
  i: IndexInfo,
  ch: { operator: '<=>' | '<#>'; model_id: number; strategy_id: number },
  dims: number,
): string | null {
  if (i.am !== 'hnsw' && i.am !== 'ivfflat') return `${i.am} is not a vector index method`;
  if (!i.valid) return 'the index is invalid';
  const want = ch.operator === '<=>' ? 'cosine_ops' : 'ip_ops';
  if (!i.opclass.endsWith(want)) return `operator class ${i.opclass} does not serve ${ch.operator} (needs …_${want})`;
  if (!new RegExp(`::halfvec\\(${dims}\\)`).test(i.expression))
    return `it indexes ${i.expression}, the channel orders by embeddings::halfvec(${dims})`;
  if (i.predicate) {
    const m = /model_id\s*=\s*(\d+)/.exec(i.predicate);
    const s = /strategy_id\s*=\s*(\d+)/.exec(i.predicate);
    if (!m || Number(m[1]) !== ch.model_id || !s || Number(s[1]) !== ch.strategy_id)
      return `its predicate (${i.predicate}) is not model_id ${ch.model_id}, strategy_id ${ch.strategy_id}`;
  }
  return null;
}

interface PlanNode {
  'Node Type'?: string;
  'Index Name'?: string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

/** Every scan of a plan, in plan order: its node type, and the index or table it reads. */
function scans(node: PlanNode, out: { type: string; index?: string; relation?: string }[] = []) {
  const type = node['Node Type'] ?? '?';
  if (/Scan/.test(type))
    out.push({
      type,
      ...(node['Index Name'] ? { index: node['Index Name'] } : {}),
      ...(node['Relation Name'] ? { relation: node['Relation Name'] } : {}),
    });
  for (const p of node.Plans ?? []) scans(p, out);
  return out;
}

/** The statement's plan (EXPLAIN, no ANALYZE: nothing runs), parameters bound, settings set. */
export async function planScans(st: Statement): Promise<{ type: string; index?: string; relation?: string }[]> {
  const rows = await st.db.query<{ 'QUERY PLAN': unknown }>(
    `EXPLAIN (FORMAT JSON) ${st.sql}`,
    st.params,
    st.settings?.length ? { settings: st.settings } : {},
  );
  const raw = rows[0]?.['QUERY PLAN'];
  const doc = (typeof raw === 'string' ? JSON.parse(raw) : raw) as { Plan: PlanNode }[];
  return scans(doc[0]!.Plan);
}

const scanLine = (s: { type: string; index?: string; relation?: string }) =>
  `${s.type}${s.index ? ` using ${s.index}` : ''}${s.relation ? ` on ${s.relation}` : ''}`;

type Semantic = Extract<ChannelConfig, { kind: 'semantic' }>;

/** The vector indexes of each table the semantic channels read, and whether each channel's statement uses one. */
export async function indexChecks(ctx: DoctorContext, pgvector: string | undefined): Promise<void> {
  const { profile, config, query, vquery, attempt, hasTable } = ctx;
  const semantic = config.retrieval.channels.filter((c): c is Semantic => c.kind === 'semantic');
  const dims = config.embedder.dimensions;
  for (const grain of ['post', 'topic'] as const) {
    const table = profile.vectors[grain];
    const channels = semantic.filter((c) => c.grain === grain);
    if (!channels.length || !hasTable(table) || !pgvector) continue;
    let indexes: IndexInfo[] = [];
    let rows: RowCount = { n: 0, exact: true };
    await attempt(`indexes:${grain}`, `indexes of ${table}`, async () => {
      indexes = (await tableIndexes(vquery, table)).filter(isVectorIndex);
      rows = await rowCount(vquery, table);
      return {
        id: `indexes:${grain}`,
        mark: 'pass',
        sentence: indexes.length
          ? `${table} has ${indexes.length} vector index${indexes.length > 1 ? 'es' : ''}.`
          : `${table} has no vector index (HNSW or IVFFlat): every semantic query reads all its rows (${rowsText(rows)}).`,
        details: indexes.flatMap((i) => [describeIndex(i), `  ${i.definition}`]),
      };
    });
    for (const ch of channels) {
      const id = `index:${ch.name}`;
      await attempt(id, `channel ${ch.name}'s plan`, async () => {
        const mode: SearchMode = ch.search ?? profile.defaultSearch();
        const [v] = await vquery<{ v: string }>(
          `SELECT embeddings::text AS v FROM ${table} WHERE model_id = $1 AND strategy_id = $2 LIMIT 1`,
          [ch.model_id, ch.strategy_id],
        );
        if (!v) return { id, mark: 'warn', sentence: `Channel ${ch.name}: no stored vector to plan a query with.` };
        const limit = ch.top_k ?? config.retrieval.top_k;
        const q = {
          vector: v.v,
          dimensions: dims,
          modelId: ch.model_id,
          strategyId: ch.strategy_id,
          operator: ch.operator,
          limit,
          search: mode,
          ...(ch.ann_candidates !== undefined ? { candidates: ch.ann_candidates } : {}),
          ...(ch.ann_max_candidates !== undefined ? { maxCandidates: ch.ann_max_candidates } : {}),
          ...(ch.ef_search !== undefined ? { efSearch: ch.ef_search } : {}),
          ...(ch.probes !== undefined ? { probes: ch.probes } : {}),
        };
        const plan = await planScans(profile.semanticStatement(grain, q));
        const names = new Set(indexes.map((i) => i.name));
        const used = plan.find((s) => s.index && names.has(s.index));
        const fit = indexes.filter((i) => unfitReason(i, ch, dims) === null);
        const unfit = indexes.flatMap((i) => {
          const why = unfitReason(i, ch, dims);
          return why ? [`${i.name} cannot serve it: ${why}`] : [];
        });
        const details = [`plan: ${plan.map(scanLine).join('; ')}`, ...unfit];
        const settings = annSettings(q)
          .map(([k, val]) => `${k} ${val}`)
          .join(', ');
        const suggestion = `CREATE INDEX CONCURRENTLY ON ${table} USING hnsw ((embeddings::halfvec(${dims})) halfvec_${ch.operator === '<=>' ? 'cosine' : 'ip'}_ops) WHERE model_id = ${ch.model_id} AND strategy_id = ${ch.strategy_id}`;
        if (mode === 'exact')
          return {
            id,
            mark: 'pass',
            sentence: `Channel ${ch.name} searches exactly (brute force over every public vector of its pair: the reference)${fit.length ? `; in ann mode index ${fit.map((i) => i.name).join(', ')} could serve it` : ''}.`,
            details,
          };
        if (used)
          return {
            id,
            mark: 'pass',
            sentence: `Channel ${ch.name} (ann: ${annCandidates(limit, ch.ann_candidates)} candidates, ${settings}) is planned over index ${used.index}.`,
            details,
          };
        const small = rows.n < SMALL_TABLE_ROWS;
        return {
          id,
          mark: small ? 'pass' : 'warn',
          sentence: small
            ? `Channel ${ch.name} (ann) is planned without a vector index: ${table} is small (${rowsText(rows)}), reading it whole is right.`
            : `Channel ${ch.name} (ann) is planned without a vector index: each query reads every vector of ${table} (${rowsText(rows)})${fit.length ? ' although an index fits (see the plan)' : `; an index it can use: ${suggestion}`}.`,
          details,
        };
      });
    }
  }

  for (const ch of config.retrieval.channels.filter((c) => c.kind === 'keyword')) {
    const table = `${ch.grain}_search_data`;
    const id = `index:${ch.name}`;
    if (!hasTable(table) || !hasTable('posts')) continue;
    await attempt(id, `channel ${ch.name}'s plan`, async () => {
      const gin = (await tableIndexes(query, table)).filter((i) => i.am === 'gin' && /search_data/.test(i.expression));
      const rows = await rowCount(query, table);
      const [t] = await query<{ title: string }>(`SELECT title FROM topics ORDER BY id LIMIT 1`);
      const st = await profile.keywordStatement(ch.grain, {
        text: t?.title ?? 'search',
        config: config.database.text_search_config,
        limit: ch.top_k ?? config.retrieval.top_k,
      });
      const plan = await planScans(st);
      const used = plan.find((s) => s.index && gin.some((i) => i.name === s.index));
      const details = [`plan: ${plan.map(scanLine).join('; ')}`, ...gin.map(describeIndex)];
      const small = rows.n < SMALL_TABLE_ROWS;
      if (used)
        return {
          id,
          mark: 'pass',
          sentence: `Channel ${ch.name} (keyword) is planned over the GIN index ${used.index} on ${table}.`,
          details,
        };
      if (!gin.length)
        return {
          id,
          mark: small ? 'pass' : 'warn',
          sentence: `${table} has no GIN index on search_data: channel ${ch.name} reads the whole table (${rowsText(rows)})${small ? ', which is fine at this size' : `; Discourse creates one: CREATE INDEX CONCURRENTLY ON ${table} USING gin (search_data)`}.`,
          details,
        };
      return {
        id,
        mark: small ? 'pass' : 'warn',
        sentence: small
          ? `Channel ${ch.name} (keyword) is planned without the GIN index: ${table} is small (${rowsText(rows)}), reading it whole is right.`
          : `Channel ${ch.name} (keyword) is planned without the GIN index of ${table} (${rowsText(rows)}): see the plan.`,
        details,
      };
    });
  }
}
