/**
 * `ragaudit run --gate` on a generator that gets everything wrong: a local OpenAI-compatible
 * server that always asserts and cites [[1]] and [[7]] (only five sources are ever shown, none in
 * the empty zone), over the demo forum. The run exits 1 naming each failing rule; every case
 * record carries a verdict, each failure its check and reason; the summary carries the pass rate;
 * a forbidden term in the answer fails its case and is counted on the console and in the digest;
 * the verdicts recompute from the results file alone, and `ragaudit judge` decides them again.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../src/model/results.js';
import { readResults } from '../src/store/results-file.js';
import { caseVerdict, summariseVerdicts, verdictSettings } from '../src/scoring/verdict.js';
import { CHAT, chatCompletion, type ChatRequestBody } from './servers/openai-server.js';
import { ProviderServer, reply } from './servers/provider-server.js';
import { MODELS, modelList } from './servers/openai-server.js';
import {
  CTA,
  FIXTURES,
  remoteConfig,
  removeWorkDirs,
  resultsOf,
  runCli,
  workDir,
  type CliRun,
} from './fixtures/audit/harness.js';

/** Asserts a fact and cites the first source and a seventh that is never shown. */
const ANSWER = `Every Loake shoe is made in Northampton [[1]], from the finest calf [[7]]. ${CTA}`;

const EXTRA_CASE = `
- id: loake-factory-secret
  question: "Where is the Loake factory?"
  kind: in_domain
  expected_topic_ids: [100]
  must_not_contain: ["Northampton"]
  expect: { must_cite_topic_ids: [100] }
`;

afterAll(removeWorkDirs);

describe('run --gate on a generator that cites sources that do not exist', { timeout: 180_000 }, () => {
  const server = new ProviderServer()
    .on(MODELS, () => reply(modelList(['gen-model'])))
    .on(CHAT, (req) => reply(chatCompletion(ANSWER, { model: (req.body as ChatRequestBody).model })));
  const cwd = workDir('run-gate');
  let close: () => Promise<void>;
  let env: Record<string, string>;
  let run: CliRun;
  let result: RunResult & { file: string };
  let gate: string;
  beforeAll(async () => {
    const started = await server.start();
    close = started.close;
    env = { GEN_URL: `${started.url}/v1`, OPENAI_API_KEY: 'sk-test-gate-0123456789' };
    const cases = join(cwd, 'cases.yml');
    writeFileSync(cases, readFileSync(join(FIXTURES, 'questions.yml'), 'utf8') + EXTRA_CASE);
    writeFileSync(join(cwd, 'gate.yaml'), remoteConfig({ name: 'gate-demo', cases, judge: '{ provider: none }' }));
    gate = join(cwd, 'rules.yml');
    writeFileSync(gate, 'citation_validity: {min: 1}\nofftopic_hallucinations: {max: 0}\n');
    run = await runCli(['run', '--config', 'gate.yaml', '--gate', gate, '--no-report'], { cwd, env });
    result = resultsOf(run);
  });
  afterAll(async () => close?.());

  it('exits 1, naming both failing rules with their values', () => {
    expect(run.code, run.err).toBe(1);
    const label = /results: .*\/(.+)\.json$/m.exec(run.out)![1]!;
    expect(run.out).toContain(`Gate rules.yml: FAILED (2 of 2 rules failed)`);
    // Of the 14 markers (two per answer), [[7]] never names a source ([[1]] neither in the empty zone).
    expect(run.out).toMatch(new RegExp(`FAIL  ${label}: citation_validity\\.min: value 0\\.\\d+, limit 1\\n`));
    // Both off-topic answers assert and cite.
    expect(run.out).toContain(`FAIL  ${label}: offtopic_hallucinations.max: value 2, limit 0\n`);
  });

  it('every case record carries a verdict; each failure names its check and a reason', () => {
    expect(result.cases).toHaveLength(7);
    for (const c of result.cases) {
      expect(c.status).toBe('ok');
      expect(c.verdict, c.id).toBeDefined();
      // Every answer cites [[7]]: no case can pass.
      expect(c.verdict!.passed).toBe(false);
      for (const f of c.verdict!.failures) {
        expect(f.check).toMatch(/^[a-z_]+$/);
        expect(f.reason.length).toBeGreaterThan(10);
      }
      expect(c.verdict!.failures.map((f) => f.check)).toContain('valid_citations');
    }
    const off = result.cases.find((c) => c.id === 'off-python-linked-list')!;
    expect(off.verdict!.failures.map((f) => f.check)).toEqual(['abstains', 'no_unsupported_facts', 'valid_citations']);
    expect(off.verdict!.failures[1]!.reason).toBe('asserts (stance answered by the wording) and cites [[1]], [[7]]');
  });

  it('the summary has the pass rate and the failures by check', () => {
    expect(result.summary.verdicts).toEqual({
      passed: 0,
      failed: 7,
      pass_rate: 0,
      by_check: { abstains: 2, no_unsupported_facts: 2, valid_citations: 7, no_forbidden: 1 },
      thresholds: { min_faithfulness: 0.8 },
    });
    expect(run.out).toContain('verdicts: 0 of 7 cases passed · pass rate 0.0 %\n');
    expect(run.out).toContain(
      'failed checks: abstains 2 · no_unsupported_facts 2 · valid_citations 7 · no_forbidden 1\n',
    );
    expect(run.out).toMatch(/^FAIL off-gazpacho-recipe: abstains: answered instead of abstaining/m);
  });

  it('forbidden content fails its case and is counted on the console and in the digest', () => {
    const secret = result.cases.find((c) => c.id === 'loake-factory-secret')!;
    const forbidden = secret.verdict!.failures.find((f) => f.check === 'no_forbidden');
    expect(forbidden?.reason).toContain('answer text: "Northampton"');
    expect(run.out).toMatch(/^forbidden content \(evidence or answer\) +1\/1$/m);
    const digest = readFileSync(result.file.replace(/\.json$/, '.md'), 'utf8');
    expect(digest).toContain('| forbidden content (evidence or answer) | 1/1 |');
    expect(digest).toContain('## Verdicts');
    expect(digest).toContain('- `loake-factory-secret`: **valid_citations**:');
    expect(digest).toContain('**no_forbidden**: forbidden content came back');
  });

  it('each verdict recomputes from the results file alone', () => {
    const stored = readResults(result.file);
    const settings = verdictSettings(stored.config);
    expect(settings.thresholds).toEqual(stored.summary.verdicts!.thresholds);
    for (const c of stored.cases) expect(caseVerdict(c, settings), c.id).toEqual(c.verdict);
    expect(summariseVerdicts(stored.cases, settings)).toEqual(stored.summary.verdicts);
  });

  it('judge RESULTS decides the verdicts again with the new stance and faithfulness', async () => {
    const judged = await runCli(['judge', result.file, '--judge', 'offline:heuristic'], { cwd, env });
    expect(judged.code, judged.err).toBe(0);
    const file = /^results: (.+)$/m.exec(judged.out)![1]!;
    const again = readResults(file);
    const settings = verdictSettings(again.config);
    for (const c of again.cases) expect(caseVerdict(c, settings), c.id).toEqual(c.verdict);
    expect(again.summary.verdicts).toEqual(summariseVerdicts(again.cases, settings));
    // The stance is now the judge's, where the first run read it from the wording.
    const reasons = again.cases.flatMap((c) => c.verdict!.failures.map((f) => f.reason));
    expect(reasons.some((r) => r.includes('(stance by the judge)'))).toBe(true);
    expect(judged.out).toMatch(/^verdicts: \d+ of 7 cases passed/m);
  });

  it('a bad gate file is exit 2 before any case runs', async () => {
    const before = server.requestsTo(CHAT).length;
    const outDir = join(cwd, 'out');
    const files = readdirSync(outDir).length;
    const bad = join(cwd, 'bad.yml');
    writeFileSync(bad, 'citation_validity: {minimum: 1}\n');
    const r = await runCli(['run', '--config', 'gate.yaml', '--gate', bad], { cwd, env });
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${bad}:1: citation_validity: unknown key 'minimum'`);
    expect(server.requestsTo(CHAT).length).toBe(before);
    expect(readdirSync(outDir).length).toBe(files);
    const orphan = await runCli(['run', '--config', 'gate.yaml', '--junit', 'j.xml'], { cwd, env });
    expect(orphan.code).toBe(2);
    expect(orphan.err).toContain('--junit gates the run: it needs --gate FILE');
  });
});
