/**
 * Mixed languages and probes in both: the French forum asked in English, the English demo forum
 * asked in French, still abstain (nothing there answers); French safety probes (and two English
 * ones on the French forum) pass with the offline stand-ins; and the offline judge reads French
 * claims with French stop words and elisions.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { languagePromptsDir } from '../src/evidence/block.js';
import { HeuristicJudge } from '../src/judge/heuristic-judge.js';
import { faithfulness, stance } from '../src/judge/criteria/index.js';
import { LlmJudge } from '../src/judge/llm-judge.js';
import type { ChatModel, Completion, CompletionRequest } from '../src/llm/types.js';
import type { SourceRecord } from '../src/model/results.js';
import { PACKAGE_ROOT, PROMPTS_DIR } from '../src/paths.js';
import { readResults } from '../src/store/results-file.js';
import { linkDemoCache } from './helpers/work-dir.js';

const FIXTURES = join(PACKAGE_ROOT, 'tests', 'fixtures', 'fr-apiculture');
const CONFIG = join(FIXTURES, 'config.yml');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function run(args: string[], cwd: string) {
  const out = mkdtempSync(join(tmpdir(), 'ragaudit-mixed-'));
  dirs.push(out);
  let err = '';
  const code = await main([...args, '--out', out, ...(args[0] === 'run' ? ['--no-report'] : [])], {
    out: () => undefined,
    err: (t) => void (err += t),
    isTTY: false,
    cwd,
    env: {},
  });
  expect(code, err).toBe(0);
  const file = readdirSync(out).find((f) => f.endsWith('.json'));
  return readResults(join(out, file!));
}

const frCwd = mkdtempSync(join(tmpdir(), 'ragaudit-mixed-fr-'));
linkDemoCache(frCwd);
dirs.push(frCwd);

describe('mixed languages', () => {
  it('the French forum asked in English abstains on every question', async () => {
    const r = await run(['run', '--config', CONFIG, '--cases', join(FIXTURES, 'mixed-en.yml')], frCwd);
    expect(r.cases).toHaveLength(4);
    expect(r.summary.generation?.stance_pattern).toEqual({ off_topic: { abstained: 4 } });
    expect(r.summary.generation?.correct_abstention_pattern).toEqual({ mean: 1, n: 4 });
  }, 300_000);

  it('the English demo forum asked in French abstains on every question', async () => {
    const r = await run(['run', '--cases', join(FIXTURES, 'mixed-fr-on-en.yml'), '--name', 'fr-on-en'], PACKAGE_ROOT);
    expect(r.config.language).toBeUndefined();
    expect(r.summary.generation?.stance_pattern).toEqual({ off_topic: { abstained: 4 } });
    expect(r.summary.generation?.correct_abstention_pattern).toEqual({ mean: 1, n: 4 });
  }, 300_000);
});

describe('French safety probes', () => {
  it('every probe passes: refusals read from French wording, nothing leaks', async () => {
    const r = await run(['probe', '--config', CONFIG], frCwd);
    expect(r.cases).toHaveLength(11);
    const failed = r.cases.filter((c) => c.scores.find((s) => s.name === 'safety')?.value !== 1).map((c) => c.id);
    expect(failed).toEqual([]);
    // The legitimate question inside an injection is not refused: it points to the closest thread.
    const legit = r.cases.find((c) => c.id === 'fr-legit-oxalique');
    expect(legit?.answer).toMatch(/acide oxalique/);
  }, 300_000);
});

describe('the offline judge in French', () => {
  const source: SourceRecord = {
    n: 1,
    post_id: 201002,
    topic_id: 201,
    post_number: 2,
    title: "Varroa : traitement à l'acide oxalique en hiver ?",
    url: 'https://rucher.example/t/varroa/201/2',
    score: 1,
    excerpt:
      "Le bon moment, c'est quand la colonie est hors couvain : chez nous plutôt fin décembre. Une seule application par hiver : l'acide abîme le couvain.",
  };
  const input = (answer: string) => ({ question: 'Quand traiter ?', answer, sources: [source], cta: '' });

  it('supports a French claim with elisions against its source, and leaves forum words out', async () => {
    const judge = new HeuristicJudge('fr');
    const ok = await judge.verdict(
      faithfulness,
      input('D’après le forum, on traite quand la colonie est hors couvain, fin décembre [[1]].'),
    );
    expect(ok.ok && ok.verdict.claims.map((c) => c.label)).toEqual(['supported']);
    const bad = await judge.verdict(faithfulness, input('Il faut traiter l’été avec du thymol en lanières [[1]].'));
    expect(bad.ok && bad.verdict.claims.map((c) => c.label)).toEqual(['unsupported']);
    const hedge = await judge.verdict(
      stance,
      input('Aucun extrait ne répond vraiment ; le fil le plus proche est « Varroa » [[1]].'),
    );
    expect(hedge.ok && hedge.verdict.stance).toBe('hedged');
  });
});

describe('the model judge of a French run', () => {
  it('is asked with prompts/fr: English instructions that say the answer is in French', async () => {
    const systems: string[] = [];
    const model: ChatModel = {
      id: 'fake:judge',
      offline: false,
      async complete<T>(req: CompletionRequest<T>): Promise<Completion<T>> {
        systems.push(req.system);
        const json = req.schema?.zod.parse({ stance: 'hedged', asserts_unsupported_facts: false, reason: 'r' });
        return {
          text: '',
          ...(json === undefined ? {} : { json }),
          usage: { inputTokens: 1, outputTokens: 1 },
          latencyMs: 0,
          model: 'm',
        };
      },
    };
    const judge = new LlmJudge(model, { promptsDir: languagePromptsDir(PROMPTS_DIR, 'fr'), temperature: 0 });
    const out = await judge.verdict(stance, {
      question: 'Quand traiter ?',
      answer: 'Aucun extrait ne répond vraiment.',
      sources: [],
      cta: '',
    });
    expect(out.ok && out.verdict.stance).toBe('hedged');
    expect(systems[0]).toMatch(/^You classify how a forum assistant's answer stands/);
    expect(systems[0]).toMatch(/written in French/);
    expect(judge.promptVersions).toMatchObject({ 'judge-stance': '2' });
  });
});
