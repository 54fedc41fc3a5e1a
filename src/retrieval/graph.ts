import type { ChannelConfig, Config } from '../config/schema.js';
import type { DiscourseProfile, RetrievedItem } from '../corpus/discourse.js';
import { RagauditError } from '../errors.js';
import type { Reranker } from '../rerank/types.js';
import type { Embedder } from '../embedding/embedder.js';
import { vectorLiteral } from '../embedding/hash-embedder.js';
import { rrf, type RankedList } from './rrf.js';
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
      grain: f.inputs.every((i) => grainOf(i) === 'post') ? 'post' : 'topic',
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

/** The cross-encoder's view of a passage: "{title}. {first N characters of the post}" (seeds §4ter). */
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

/** Runs every node of the graph for one question. */
export class RetrievalGraph {
  readonly nodes: NodeSpec[];
  constructor(
    private readonly config: Config,
    private readonly deps: GraphDeps,
  ) {
    this.nodes = graphNodes(config);
  }

  async run(question: string): Promise<Record<string, NodeResult>> {
    const out: Record<string, NodeResult> = {};
    const own: Record<string, number> = {};
    const deps: Record<string, Set<string>> = {};
    let vector: { literal: string; ms: number; zero: boolean } | undefined;
    const embedOnce = async () => {
      if (!vector) {
        const t0 = performance.now();
        const [v] = await this.deps.embedder.embed([question]);
        vector = {
          literal: vectorLiteral(v!),
          ms: performance.now() - t0,
          zero: queryVectorIsZero(v!, this.deps.embedder.id),
        };
      }
      return vector;
    };
    const topK = this.config.retrieval.top_k;
    for (const node of this.nodes) {
      const t0 = performance.now();
      let result: Omit<NodeResult, 'latencyMs' | 'name' | 'kind'>;
      if (node.kind === 'semantic' || node.kind === 'keyword') {
        const ch = node.channel;
        const limit = ch.top_k ?? topK;
        let items: RetrievedItem[];
        // Embedding time measured inside this node's window when this node triggered it.
        let inWindow = 0;
        if (node.kind === 'semantic') {
          const fresh = !vector;
          const v = await embedOnce();
          if (fresh) inWindow = v.ms;
          // The question is embedded once and shared: it is its own dependency, so a fusion of two
          // semantic channels counts it once, and the first channel does not count it twice.
          own[EMBED] = v.ms;
          const q = {
            vector: v.literal,
            dimensions: this.deps.embedder.dimensions,
            modelId: (ch as { model_id: number }).model_id,
            strategyId: (ch as { strategy_id: number }).strategy_id,
            operator: (ch as { operator: '<=>' | '<#>' }).operator,
            limit,
            maxPostsCount: node.maxPostsCount,
          };
          // A zero vector has no direction: cosine distance to it is undefined (NaN), so nothing is near it.
          items = v.zero
            ? []
            : node.grain === 'post'
              ? await this.deps.profile.semanticPosts(q)
              : await this.deps.profile.semanticTopics(q);
        } else {
          const q = {
            text: question,
            config: this.config.database.text_search_config,
            limit,
            maxPostsCount: node.maxPostsCount,
          };
          items =
            node.grain === 'post' ? await this.deps.profile.keywordPosts(q) : await this.deps.profile.keywordTopics(q);
        }
        let gatedOut: number | undefined;
        if (ch.title_gate && this.deps.titleFilter)
          ({ items, gatedOut } = this.deps.titleFilter.apply(question, items));
        result = { grain: node.grain, items, ...(gatedOut !== undefined ? { gatedOut } : {}) };
        own[node.name] = performance.now() - t0 - inWindow;
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
