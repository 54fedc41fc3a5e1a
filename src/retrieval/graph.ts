import type { ChannelConfig, Config } from '../config/schema.js';
import type { SearchMode } from '../corpus/ann.js';
import type { DiscourseProfile, SemanticQuery } from '../corpus/discourse.js';
import type { RetrievedItem } from '../model/retrieved-item.js';
import { RagauditError } from '../errors.js';
import type { Reranker } from '../rerank/types.js';
import type { Embedder } from '../embedding/embedder.js';
import { vectorLiteral } from '../embedding/hash-embedder.js';
import { rrf, type RankedList } from './rrf.js';
import { StatementChunks } from './statement-chunks.js';
import { isStatementTimeout } from '../db/db-errors.js';
import type { TitleFilter } from './title-filter.js';

/** One node of the retrieval graph: a channel (possibly size-routed), a fusion or the rerank. */
export type NodeSpec =
  | {
      name: string;
      kind: 'semantic' | 'keyword';
      grain: 'post' | 'topic';
      channel: ChannelConfig;
      maxPostsCount: number | null;
    }
  | { name: string; kind: 'rrf'; grain: 'post' | 'topic'; inputs: string[]; k: number }
  | { name: string; kind: 'rerank'; grain: 'post' | 'topic'; input: string };

/** A node's ranked list for one question. */
export interface NodeResult extends RankedList {
  name: string;
  kind: NodeSpec['kind'];
  /**
   * Time to produce this node's list alone, ms: a channel's embedding and query; a fusion's or
   * rerank's own work plus that of the channels it depends on (each counted once).
   */
  latencyMs: number;
  /** Topics removed by the title gate (topic channels with `title_gate`). */
  gatedOut?: number;
  /** A semantic channel in `ann` mode that returned fewer items than asked (visibility left fewer of the index's candidates). */
  annShort?: AnnShort;
  /** Index recall (`retrieval.index_recall`): the channel's list in both search modes, before any title gate. */
  indexRecall?: { ann: RetrievedItem[]; exact: RetrievedItem[] };
}

/** What an `ann` search returned against what was asked. */
export interface AnnShort {
  returned: number;
  wanted: number;
}

export interface GraphDeps {
  profile: DiscourseProfile;
  embedder: Embedder;
  reranker?: Reranker;
  titleFilter?: TitleFilter;
}

/** Expands the config into nodes, in an order where every node follows its inputs. */
export function graphNodes(config: Config): NodeSpec[] {
  const nodes: NodeSpec[] = [];
  for (const ch of config.retrieval.channels) {
    const limits = Array.isArray(ch.max_posts_count) ? ch.max_posts_count : null;
    nodes.push({
      name: ch.name,
      kind: ch.kind,
      grain: ch.grain,
      channel: ch,
      maxPostsCount: limits ? null : ((ch.max_posts_count as number | undefined) ?? null),
    });
    for (const n of limits ?? [])
      nodes.push({ name: `${ch.name}_${n}`, kind: ch.kind, grain: ch.grain, channel: ch, maxPostsCount: n });
  }
  const grainOf = (name: string) => nodes.find((n) => n.name === name)!.grain;
  for (const f of config.retrieval.fusions) {
    nodes.push({
      name: f.name,
      kind: 'rrf',
      inputs: f.inputs,
      k: f.k,
      // Post-grain when any input is: the fused passages are that input's posts (src/retrieval/rrf.ts).
      grain: f.inputs.some((i) => grainOf(i) === 'post') ? 'post' : 'topic',
    });
  }
  if (config.rerank?.enabled)
    nodes.push({
      name: config.rerank.name,
      kind: 'rerank',
      input: config.rerank.node,
      grain: grainOf(config.rerank.node),
    });
  return nodes;
}

/** The cross-encoder's view of a passage: "{title}. {first N characters of the post}". */
export function rerankPassage(item: RetrievedItem, chars: number): string {
  return `${item.title}. ${item.text.slice(0, chars)}`;
}

/**
 * Whether a question's vector is all zeros (a question with no content word, "Why?" or an emoji,
 * on the offline embedder). A vector with a non-finite value is the embedder's failure: this
 * case's error, never a NaN score.
 */
export function queryVectorIsZero(v: readonly number[], embedderId: string): boolean {
  if (!v.every(Number.isFinite))
    throw new RagauditError(`embedder ${embedderId} returned a vector with a non-finite value for this question`);
  return v.every((x) => x === 0);
}

/** The pseudo-dependency holding the question's embedding time (not a valid node name). */
const EMBED = '#embed';

/** A channel node of the graph. */
type ChannelNode = Extract<NodeSpec, { kind: 'semantic' | 'keyword' }>;

/** What a semantic channel's list says beside its items (see {@link NodeResult}). */
type ChannelFacts = Pick<NodeResult, 'annShort' | 'indexRecall'>;

/** A channel's list as the node loop gets it; `untimedMs`: time spent on index recall's other mode, not charged. */
interface ChannelOut extends ChannelFacts {
  items: RetrievedItem[];
  untimedMs?: number;
}

/** A question's embedding as the channels use it. */
interface QueryVector {
  literal: string;
  zero: boolean;
}

/**
 * What one question's channel lists were, computed ahead for a batch: each channel's list, and
 * the share of the batch's time charged to this question (the embedding and each channel's
 * statement, divided by the questions of the batch).
 */
export interface PreparedChannels {
  lists: Record<string, RetrievedItem[]>;
  embedMs: number;
  channelMs: Record<string, number>;
  /** This question's own failure (a vector with a non-finite value): it fails alone. */
  error?: Error;
  /** Per semantic channel: a short `ann` list, and both modes' lists under index recall. */
  facts?: Record<string, ChannelFacts>;
}

/** Channel lists for a batch of questions, in the questions' order, and how long each part took. */
export interface ChannelBatch {
  prepared: PreparedChannels[];
  /** Wall time of the batch's embedding call and of each channel's statement, ms. */
  timing: { embedMs: number; channels: Record<string, number>; wallMs: number };
}

/** How many questions one batched statement carries: enough to amortise a round trip, small enough to stay well inside the statement timeout. */
export const DEFAULT_BATCH_SIZE = 250;

/** Runs every node of the graph for one question, or the channels of many at once. */
export class RetrievalGraph {
  readonly nodes: NodeSpec[];
  constructor(
    private readonly config: Config,
    private readonly deps: GraphDeps,
  ) {
    this.nodes = graphNodes(config);
  }

  private channelNodes(): ChannelNode[] {
    return this.nodes.filter((n): n is ChannelNode => n.kind === 'semantic' || n.kind === 'keyword');
  }

  private semanticQuery(node: ChannelNode, mode?: SearchMode): Omit<SemanticQuery, 'vector'> {
    const ch = node.channel;
    if (ch.kind !== 'semantic') throw new Error(`internal: ${node.name} is not a semantic channel`);
    return {
      dimensions: this.deps.embedder.dimensions,
      modelId: ch.model_id,
      strategyId: ch.strategy_id,
      operator: ch.operator,
      limit: ch.top_k ?? this.config.retrieval.top_k,
      maxPostsCount: node.maxPostsCount,
      search: mode ?? this.searchMode(node),
      ...(ch.ann_candidates !== undefined ? { candidates: ch.ann_candidates } : {}),
      ...(ch.ann_max_candidates !== undefined ? { maxCandidates: ch.ann_max_candidates } : {}),
      ...(ch.ef_search !== undefined ? { efSearch: ch.ef_search } : {}),
      ...(ch.probes !== undefined ? { probes: ch.probes } : {}),
    };
  }

  /** A semantic channel's search mode: its config's, else the database's default (ann on PostgreSQL, exact on PGlite). */
  searchMode(node: ChannelNode): SearchMode {
    const named = node.channel.kind === 'semantic' ? node.channel.search : undefined;
    if (named) return named;
    // A stand-in with only the search methods (a test double, a library user's own) searches as it likes: exact.
    const profile = this.deps.profile;
    return 'defaultSearch' in profile ? profile.defaultSearch() : 'exact';
  }

  /** Whether each semantic channel also runs in the other mode (index recall). */
  private get indexRecall(): boolean {
    return this.config.retrieval.index_recall === true;
  }

  /** One semantic channel's list for one vector in a mode. */
  private semanticList(node: ChannelNode, vector: string, mode?: SearchMode): Promise<RetrievedItem[]> {
    const q = { ...this.semanticQuery(node, mode), vector };
    return node.grain === 'post' ? this.deps.profile.semanticPosts(q) : this.deps.profile.semanticTopics(q);
  }

  /** One semantic channel's lists for many vectors in a mode. */
  private semanticLists(node: ChannelNode, vectors: string[], mode?: SearchMode): Promise<RetrievedItem[][]> {
    if (!vectors.length) return Promise.resolve([]);
    return this.chunked(node, mode ?? this.searchMode(node), vectors, (part) => {
      const q = { ...this.semanticQuery(node, mode), vectors: [...part] };
      return node.grain === 'post' ? this.deps.profile.semanticPostsBatch(q) : this.deps.profile.semanticTopicsBatch(q);
    });
  }

  /** Chunk sizes per channel and search mode, kept over the run (src/retrieval/statement-chunks.ts). */
  private readonly chunks = new Map<string, StatementChunks>();

  /**
   * A channel's batch statement over `items`: one statement where the profile shares its
   * candidates between the questions (the embedded demo), else in chunks sized to the statement
   * timeout (PostgreSQL's lateral shape, a statement's cost the sum of its questions').
   */
  private chunked<I>(
    node: ChannelNode,
    mode: string,
    items: readonly I[],
    statement: (part: readonly I[]) => Promise<RetrievedItem[][]>,
  ): Promise<RetrievedItem[][]> {
    const profile = this.deps.profile;
    if (!('batchShape' in profile) || profile.batchShape({}) !== 'lateral') return statement(items);
    const key = `${node.name}\u0000${mode}`;
    let sizer = this.chunks.get(key);
    if (!sizer)
      this.chunks.set(
        key,
        (sizer = new StatementChunks(this.config.database.statement_timeout_ms, undefined, isStatementTimeout)),
      );
    return sizer.run(items, statement);
  }

  /** What a channel's list says beside its items: a short `ann` list, and both modes' lists under index recall. */
  private annFacts(node: ChannelNode, items: RetrievedItem[], other: RetrievedItem[] | undefined): ChannelFacts {
    const mode = this.searchMode(node);
    const wanted = node.channel.top_k ?? this.config.retrieval.top_k;
    return {
      ...(mode === 'ann' && items.length < wanted ? { annShort: { returned: items.length, wanted } } : {}),
      ...(other ? { indexRecall: mode === 'ann' ? { ann: items, exact: other } : { ann: other, exact: items } } : {}),
    };
  }

  private keywordQuery(node: ChannelNode) {
    return {
      config: this.config.database.text_search_config,
      limit: node.channel.top_k ?? this.config.retrieval.top_k,
      maxPostsCount: node.maxPostsCount,
    };
  }

  /** One question through every node, each channel asking the database on its own (the per-query path). */
  async run(question: string): Promise<Record<string, NodeResult>> {
    let vector: { v: QueryVector; ms: number } | undefined;
    return this.complete(question, {
      embed: async () => {
        const fresh = !vector;
        if (!vector) {
          const t0 = performance.now();
          const [v] = await this.deps.embedder.embed([question]);
          vector = { v: this.queryVector(v!), ms: performance.now() - t0 };
        }
        return { ...vector, fresh };
      },
      channel: async (node, v) => {
        if (node.kind === 'semantic') {
          // A zero vector has no direction: cosine distance to it is undefined (NaN), so nothing is near it.
          if (v!.zero) return { items: [] };
          const items = await this.semanticList(node, v!.literal);
          if (!this.indexRecall) return { items, ...this.annFacts(node, items, undefined) };
          // The other mode, for index recall only: timed apart, never charged to the channel.
          const t0 = performance.now();
          const other = await this.semanticList(node, v!.literal, this.searchMode(node) === 'ann' ? 'exact' : 'ann');
          return { items, ...this.annFacts(node, items, other), untimedMs: performance.now() - t0 };
        }
        const q = { ...this.keywordQuery(node), text: question };
        return {
          items: await (node.grain === 'post' ? this.deps.profile.keywordPosts(q) : this.deps.profile.keywordTopics(q)),
        };
      },
    });
  }

  private queryVector(v: number[]): QueryVector {
    return { literal: vectorLiteral(v), zero: queryVectorIsZero(v, this.deps.embedder.id) };
  }

  /**
   * The channel lists of many questions: one embedding call for the distinct questions and one
   * statement per channel (`…Batch` in the profile), the channels' statements sent together (a
   * pool runs them at once on PostgreSQL). Each list is the one {@link run} would get. Fails as a
   * whole when the embedding or a statement fails (the caller then takes the per-query path, where
   * each question meets its own error); a question whose vector is not finite fails alone, at
   * {@link completePrepared}.
   */
  async prepareBatch(questions: readonly string[]): Promise<ChannelBatch> {
    const t0 = performance.now();
    const distinct = [...new Set(questions)];
    const index = new Map(distinct.map((q, i) => [q, i] as const));
    const nodes = this.channelNodes();
    let embedMs = 0;
    let vectors: (QueryVector | Error)[] = [];
    if (nodes.some((n) => n.kind === 'semantic')) {
      const te = performance.now();
      const raw = await this.deps.embedder.embed(distinct);
      embedMs = performance.now() - te;
      vectors = raw.map((v) => {
        try {
          return this.queryVector(v);
        } catch (e) {
          return e instanceof Error ? e : new RagauditError(String(e));
        }
      });
    }
    // Only vectors with a direction are asked for; the others have an empty list (see run()).
    const asked = distinct.flatMap((_, i) => {
      const v = vectors[i];
      return v && !(v instanceof Error) && !v.zero ? [i] : [];
    });
    const channels: Record<string, number> = {};
    const askedVectors = asked.map((i) => (vectors[i] as QueryVector).literal);
    const others: Record<string, (RetrievedItem[] | undefined)[]> = {};
    const lists = await Promise.all(
      nodes.map(async (node) => {
        const tc = performance.now();
        let out: RetrievedItem[][];
        if (node.kind === 'semantic') {
          const got = await this.semanticLists(node, askedVectors);
          out = distinct.map(() => []);
          asked.forEach((i, k) => (out[i] = got[k]!));
          channels[node.name] = performance.now() - tc;
          if (this.indexRecall) {
            // The other mode, for index recall only: after the timed statement, never charged.
            const mode = this.searchMode(node) === 'ann' ? 'exact' : 'ann';
            const other = await this.semanticLists(node, askedVectors, mode);
            others[node.name] = distinct.map(() => undefined);
            asked.forEach((i, k) => (others[node.name]![i] = other[k]!));
          }
          return out;
        } else {
          out = await this.chunked(node, 'keyword', distinct, (texts) => {
            const q = { ...this.keywordQuery(node), texts: [...texts] };
            return node.grain === 'post'
              ? this.deps.profile.keywordPostsBatch(q)
              : this.deps.profile.keywordTopicsBatch(q);
          });
        }
        channels[node.name] = performance.now() - tc;
        return out;
      }),
    );
    const share = (ms: number) => ms / Math.max(1, questions.length);
    const prepared = questions.map((question): PreparedChannels => {
      const i = index.get(question)!;
      const v = vectors[i];
      if (v instanceof Error) return { lists: {}, embedMs: share(embedMs), channelMs: {}, error: v };
      const facts = Object.fromEntries(
        nodes.flatMap((n, k) =>
          n.kind === 'semantic' && vectors[i] && !(vectors[i] as QueryVector).zero
            ? [[n.name, this.annFacts(n, lists[k]![i]!, others[n.name]?.[i])] as const]
            : [],
        ),
      );
      return {
        lists: Object.fromEntries(nodes.map((n, k) => [n.name, lists[k]![i]!])),
        embedMs: share(embedMs),
        channelMs: Object.fromEntries(nodes.map((n) => [n.name, share(channels[n.name]!)])),
        ...(Object.keys(facts).length ? { facts } : {}),
      };
    });
    return { prepared, timing: { embedMs, channels, wallMs: performance.now() - t0 } };
  }

  /**
   * One question of a batch through every node: the channel lists come from {@link prepareBatch},
   * the title gate, fusions and rerank run here as in {@link run}, so the lists are the same. A
   * channel's latency is its share of the batch's statement (and of the embedding call).
   */
  async completePrepared(question: string, prepared: PreparedChannels): Promise<Record<string, NodeResult>> {
    if (prepared.error) throw prepared.error;
    return this.complete(
      question,
      {
        embed: () => Promise.resolve({ v: undefined, ms: prepared.embedMs, fresh: false }),
        channel: (node) => Promise.resolve({ items: prepared.lists[node.name]!, ...prepared.facts?.[node.name] }),
      },
      prepared.channelMs,
    );
  }

  /** The node loop shared by both paths: `source` gives the embedding and each channel's list. */
  private async complete(
    question: string,
    source: {
      embed: () => Promise<{ v: QueryVector | undefined; ms: number; fresh: boolean }>;
      channel: (node: ChannelNode, v: QueryVector | undefined) => Promise<ChannelOut>;
    },
    charged: Record<string, number> = {},
  ): Promise<Record<string, NodeResult>> {
    const out: Record<string, NodeResult> = {};
    const own: Record<string, number> = {};
    const deps: Record<string, Set<string>> = {};
    for (const node of this.nodes) {
      const t0 = performance.now();
      let result: Omit<NodeResult, 'latencyMs' | 'name' | 'kind'>;
      if (node.kind === 'semantic' || node.kind === 'keyword') {
        const ch = node.channel;
        // Embedding time measured inside this node's window when this node triggered it.
        let inWindow = 0;
        let v: QueryVector | undefined;
        if (node.kind === 'semantic') {
          const e = await source.embed();
          if (e.fresh) inWindow = e.ms;
          // The question is embedded once and shared: it is its own dependency, so a fusion of two
          // semantic channels counts it once, and the first channel does not count it twice.
          own[EMBED] = e.ms;
          v = e.v;
        }
        const got = await source.channel(node, v);
        let items = got.items;
        let gatedOut: number | undefined;
        if (ch.title_gate && this.deps.titleFilter)
          ({ items, gatedOut } = this.deps.titleFilter.apply(question, items));
        result = {
          grain: node.grain,
          items,
          ...(gatedOut !== undefined ? { gatedOut } : {}),
          ...(got.annShort ? { annShort: got.annShort } : {}),
          ...(got.indexRecall ? { indexRecall: got.indexRecall } : {}),
        };
        own[node.name] = performance.now() - t0 - inWindow - (got.untimedMs ?? 0) + (charged[node.name] ?? 0);
        deps[node.name] = new Set(node.kind === 'semantic' ? [node.name, EMBED] : [node.name]);
      } else if (node.kind === 'rrf') {
        result = rrf(
          node.inputs.map((i) => out[i]!),
          node.k,
        );
        own[node.name] = performance.now() - t0;
        deps[node.name] = new Set([node.name, ...node.inputs.flatMap((i) => [...deps[i]!])]);
      } else if (node.kind === 'rerank') {
        const rr = this.config.rerank!;
        const candidates = out[node.input]!.items.slice(0, rr.candidates);
        const scores = await this.deps.reranker!.score(
          question,
          candidates.map((c) => rerankPassage(c, rr.passage_chars)),
        );
        const order = candidates
          .map((item, i) => ({ item: { ...item, score: scores[i]! }, i }))
          .sort((a, b) => b.item.score - a.item.score || a.i - b.i);
        let items = order.map((o) => o.item);
        if (rr.dedupe_topics) {
          const seen = new Set<number>();
          items = items.filter((it) => (seen.has(it.topic_id) ? false : (seen.add(it.topic_id), true)));
        }
        result = { grain: node.grain, items };
        own[node.name] = performance.now() - t0;
        deps[node.name] = new Set([node.name, ...deps[node.input]!]);
      } else {
        throw new Error(`unknown node kind in ${JSON.stringify(node)}`);
      }
      const latencyMs = [...deps[node.name]!].reduce((acc, d) => acc + own[d]!, 0);
      out[node.name] = { name: node.name, kind: node.kind, latencyMs, ...result };
    }
    return out;
  }
}
