/**
 * A local cross-encoder server speaking three rerank wire formats:
 *   TEI            POST /rerank     {query, texts, raw_scores, truncate} → [{index, score}] best first;
 *                                   413 when texts exceed maxBatch (TEI's max_client_batch_size)
 * vLLM / Jina    POST /v1/rerank  {model, query, documents, top_n} → {results: [{index, relevance_score}]} (raw logits)
 *   Cohere-style   POST /v2/rerank  same shape, relevance_score a probability (sigmoid of the logit)
 *
 *   const server = rerankServer({ maxBatch: 4 });
 *   const { url, close } = await server.start();
 *   new TeiReranker({ url });   server.requestsTo(TEI_RERANK).map((r) => r.body)
 *
 * The default score is a lexical stand-in: 2 × (shared words) − 3, a logit-like number.
 */
import { ProviderServer, reply, status } from './provider-server.js';

export const TEI_RERANK = 'POST /rerank';
export const VLLM_RERANK = 'POST /v1/rerank';
export const COHERE_RERANK = 'POST /v2/rerank';

export interface RerankServerOptions {
  /** Logit for one (query, passage) pair (default {@link lexicalScore}). */
  score?: (query: string, text: string) => number;
  /** TEI answers 413 beyond this many texts (default 32). */
  maxBatch?: number;
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/** 2 × (distinct query words found in the text) − 3. */
export function lexicalScore(query: string, text: string): number {
  const t = new Set(text.toLowerCase().split(/\W+/).filter(Boolean));
  const q = new Set(query.toLowerCase().split(/\W+/).filter(Boolean));
  let shared = 0;
  for (const w of q) if (t.has(w)) shared++;
  return 2 * shared - 3;
}

/** A ProviderServer with the TEI, vLLM and Cohere rerank routes. */
export function rerankServer(opts: RerankServerOptions = {}): ProviderServer {
  const score = opts.score ?? lexicalScore;
  const maxBatch = opts.maxBatch ?? 32;
  const ranked = (query: string, docs: string[]) =>
    docs.map((d, index) => ({ index, logit: score(query, d) })).sort((a, b) => b.logit - a.logit);
  const results = (body: { query: string; documents: string[]; top_n?: number }, prob: boolean) => ({
    id: 'rerank-test',
    results: ranked(body.query, body.documents)
      .slice(0, body.top_n ?? body.documents.length)
      .map((r) => ({ index: r.index, relevance_score: prob ? sigmoid(r.logit) : r.logit })),
    meta: { billed_units: { search_units: 1 } },
  });
  return new ProviderServer()
    .on(TEI_RERANK, (req) => {
      const body = req.body as { query: string; texts: string[]; raw_scores?: boolean };
      if (body.texts.length > maxBatch) {
        return status(413, {
          error: `batch size ${body.texts.length} > maximum allowed batch size ${maxBatch}`,
          error_type: 'Validation',
        });
      }
      return reply(
        ranked(body.query, body.texts).map((r) => ({
          index: r.index,
          score: body.raw_scores ? r.logit : sigmoid(r.logit),
        })),
      );
    })
    .on(VLLM_RERANK, (req) => reply(results(req.body as { query: string; documents: string[] }, false)))
    .on(COHERE_RERANK, (req) => reply(results(req.body as { query: string; documents: string[] }, true)));
}
