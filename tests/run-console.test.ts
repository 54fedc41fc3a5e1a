/**
 * What `ragaudit run` says at the end of its console output: the generator's cost row in the
 * generation table (the judge's in the judge table), and the config with the components the run
 * actually used, stand-ins labelled, as flags changed them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CliIO } from '../src/cli/command.js';
import { main } from '../src/cli/main.js';
import { RunResultSchema } from '../src/model/results.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { componentsLine } from '../src/reports/components-line.js';
import { removeWorkDirs, workDir } from './helpers/work-dir.js';

const CORE = join(PACKAGE_ROOT, 'cases', 'demo', 'questions-core.yml');

async function run(args: string[]): Promise<string> {
  let out = '';
  const io: CliIO = {
    out: (t) => void (out += t),
    err: () => undefined,
    isTTY: false,
    cwd: workDir('run-console'),
    env: { COLUMNS: '200' },
  };
  expect(await main(['run', '--cases', CORE, ...args], io)).toBe(0);
  return out;
}

describe('the end of the run console', { timeout: 120_000 }, () => {
  afterAll(removeWorkDirs);

  it('the generator cost row follows the token counts; the judge cost is in the judge table', async () => {
    const lines = (await run([])).split('\n');
    const tokens = lines.findIndex((l) => l.startsWith('tokens in / out'));
    expect(lines[tokens + 1]).toMatch(
      /^generator cost \(estimate\) +– \(\d+ in \/ \d+ out tokens of an OFFLINE STAND-IN: nothing billed\)$/,
    );
    expect(lines.some((l) => /^judge cost \(estimate\) +– \(no price in config judge\.prices\)$/.test(l))).toBe(true);
    // The config and every component it used, each stand-in said to be one.
    expect(lines).toContain(
      'used:    generator offline:extractive (OFFLINE STAND-IN) · judge offline:heuristic (OFFLINE STAND-IN) · embedder offline:hash-384 (OFFLINE STAND-IN) · reranker offline:lexical (OFFLINE STAND-IN)',
    );
    expect(lines.find((l) => l.startsWith('config:  '))).toMatch(
      /^config: {2}\(built-in demo\) \(digest [0-9a-f]{12}\) · embedded demo forum$/,
    );
  });

  it('a flag that changes a component changes the line: --no-judge leaves the judge out', async () => {
    const used = (await run(['--no-judge'])).split('\n').find((l) => l.startsWith('used:'));
    expect(used).toBe(
      'used:    generator offline:extractive (OFFLINE STAND-IN) · embedder offline:hash-384 (OFFLINE STAND-IN) · reranker offline:lexical (OFFLINE STAND-IN)',
    );
  });

  it('remote components by id, a cross-encoder server with the model the config names for it', () => {
    const r = RunResultSchema.parse(
      JSON.parse(readFileSync(join(PACKAGE_ROOT, 'results', 'reference', '20261204-233647-demo.json'), 'utf8')),
    );
    r.components = {
      database: { id: 'pg', offline: false, label: 'pg' },
      reranker: { id: 'tei:http://gpu:8080', offline: false, label: 'tei:http://gpu:8080' },
      condenser: { id: 'openai:qwen3', offline: false, label: 'openai:qwen3' },
      judge: { id: 'openai:qwen3', offline: false, label: 'openai:qwen3' },
      embedder: { id: 'openai:bge-m3@http://gpu:8081/v1', offline: false, label: 'openai:bge-m3' },
      generator: { id: 'openai:llama3.1:8b', offline: false, label: 'openai:llama3.1:8b' },
    };
    r.config = { ...r.config, rerank: { provider: 'tei', model: 'BAAI/bge-reranker-v2-m3', node: 'posts' } };
    expect(componentsLine(r)).toBe(
      'generator openai:llama3.1:8b · judge openai:qwen3 · embedder openai:bge-m3@http://gpu:8081/v1 · reranker tei:http://gpu:8080 (model BAAI/bge-reranker-v2-m3) · condenser openai:qwen3',
    );
  });
});
