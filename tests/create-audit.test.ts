/**
 * createAudit as another program uses it: from the built package by its name, on the embedded
 * demo, with its own reranker and generator passed in. The results carry the passed components
 * (labelled like built ones), the pipeline calls them, and the config's own providers fill the rest.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { removeWorkDirs, workDir } from './helpers/work-dir.js';

const lib: typeof import('ragaudit') = await import('ragaudit');
type Reranker = import('ragaudit').Reranker;
type ChatModel = import('ragaudit').ChatModel;

afterAll(removeWorkDirs);

/** A reranker of the program's own: keeps the order it is given, top score 3.25; counts its calls. */
function keepOrderReranker(): Reranker & { calls: number } {
  return {
    id: 'custom:keep-order',
    offline: false,
    calls: 0,
    async score(_query: string, passages: string[]) {
      this.calls++;
      return passages.map((_p, i) => 3.25 - i / 1000);
    },
  };
}

/** A generator of the program's own: cites the first source and ends with the CTA. */
function citingGenerator(cta: string): ChatModel & { calls: number } {
  return {
    id: 'custom:cite-first',
    offline: true,
    calls: 0,
    async complete(req) {
      this.calls++;
      const text = `See the first thread [[1]].\n\n${cta}`;
      return { text, usage: { inputTokens: 1, outputTokens: 1 }, latencyMs: 0, model: this.id };
    },
  };
}

describe('createAudit (the built package entry)', { timeout: 180_000 }, () => {
  it('runs retrieval and the audit on the demo with a reranker and a generator passed in', async () => {
    const dir = workDir('create-audit');
    const loaded = lib.loadConfig(undefined, {}, [
      { path: ['cache_dir'], flag: 'cache_dir', value: 'cache' },
      { path: ['output_dir'], flag: 'output_dir', value: 'results' },
    ]);
    const cases = lib.loadCases(lib.casePaths(loaded)).slice(0, 3);
    const reranker = keepOrderReranker();
    const generator = citingGenerator(loaded.config.evidence.cta);

    const audit = await lib.createAudit({ config: loaded, reranker, generator, cwd: dir });
    try {
      expect(audit.context.reranker).toBe(reranker);

      const retrieval = await audit.retrieval(cases);
      expect(retrieval.cases.map((c) => c.status)).toEqual(['ok', 'ok', 'ok']);
      // Each case's lists, then each question again alone for the latency sample (3 questions, under 16).
      expect(reranker.calls).toBe(6);
      // Recorded like a built reranker; the embedder is still the config's offline one.
      expect(retrieval.components.reranker).toEqual({
        id: 'custom:keep-order',
        offline: false,
        label: 'custom:keep-order',
      });
      expect(retrieval.components.embedder!.id).toBe('offline:hash-384');
      expect(retrieval.components.generator).toBeUndefined();
      expect(Object.keys(retrieval.cases[0]!.retrieval)).toContain('rerank');

      const { result } = await audit.run(cases);
      // The run retrieves for itself, and takes its own latency sample.
      expect(reranker.calls).toBe(12);
      expect(generator.calls).toBe(3);
      expect(result.cases.map((c) => c.status)).toEqual(['ok', 'ok', 'ok']);
      expect(result.components.reranker!.id).toBe('custom:keep-order');
      // A passed component that says it is offline is labelled as a stand-in, like a built one.
      expect(result.components.generator).toEqual({
        id: 'custom:cite-first',
        offline: true,
        label: 'custom:cite-first (OFFLINE STAND-IN, not a language model)',
      });
      expect(result.components.judge!.id).toBe('offline:heuristic');
      for (const r of result.cases) {
        // The zone comes from the passed reranker's top-1 score.
        expect(r.top1_score).toBe(3.25);
        expect(r.zone).toBe('normal');
        expect(r.answer).toContain('[[1]]');
      }
      expect(result.summary.judge).toBeDefined();
    } finally {
      await audit.close();
    }
  });

  it('refuses a reranker passed in when the config reranks nothing', async () => {
    const loaded = lib.loadConfig(undefined, {}, [
      { path: ['rerank', 'enabled'], flag: 'rerank.enabled', value: false, createParents: false },
    ]);
    await expect(
      lib.createAudit({ config: loaded, reranker: keepOrderReranker(), cwd: workDir('create-audit-no-rerank') }),
    ).rejects.toThrow(/no enabled rerank section/);
  });
});
