/**
 * The typed results model reads every results file the current version wrote: the reference runs
 * parse with the typed scores and summary, and read back to the same JSON (no field dropped, no
 * key reordered), so a stored file that is re-judged or re-read keeps its bytes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunResultSchema } from '../src/model/results.js';
import { findScore, ScoreSchema } from '../src/model/scores.js';

const REFERENCE = join(import.meta.dirname, '..', 'results', 'reference');
const files = readdirSync(REFERENCE).filter((f) => f.endsWith('.json') && !/calibration|compare/.test(f));

describe('results/reference/*.json parse with the typed model', () => {
  it('there are reference results files to read', () => {
    expect(files.length).toBeGreaterThanOrEqual(3);
  });
  for (const f of files) {
    it(`${f} parses and reads back to the same JSON`, () => {
      const data: unknown = JSON.parse(readFileSync(join(REFERENCE, f), 'utf8'));
      const parsed = RunResultSchema.parse(data);
      expect(JSON.stringify(parsed)).toBe(JSON.stringify(data));
      expect(parsed.summary.retrieval.cases).toBe(parsed.cases.length);
    });
  }
});

describe('scores are typed by name', () => {
  it('refuses details of the wrong shape under a listed name, and details on a plain score', () => {
    expect(
      ScoreSchema.safeParse({ name: 'stance_pattern', value: null, details: { stance: 'answered' } }).success,
    ).toBe(true);
    // A new metric's score needs no entry in the model while it carries only a value.
    expect(ScoreSchema.safeParse({ name: 'answer_length_ok', value: 1, reason: 'under 200 words' }).success).toBe(true);
    expect(ScoreSchema.safeParse({ name: 'answer_length_ok', value: 1, details: { words: 120 } }).success).toBe(false);
    expect(ScoreSchema.safeParse({ name: 'Not Snake', value: 1 }).success).toBe(false);
    expect(ScoreSchema.safeParse({ name: 'stance_pattern', value: null, details: { stance: 'maybe' } }).success).toBe(
      false,
    );
    expect(ScoreSchema.safeParse({ name: 'cta', value: 1, details: { x: 1 } }).success).toBe(false);
  });

  it('findScore narrows the details to the named score', () => {
    const scores = [
      ScoreSchema.parse({ name: 'cta', value: 1 }),
      ScoreSchema.parse({
        name: 'judge_stance',
        value: null,
        details: { stance: 'hedged', asserts_unsupported_facts: true },
      }),
    ];
    const st = findScore(scores, 'judge_stance');
    expect(st?.details?.asserts_unsupported_facts).toBe(true);
    expect(findScore(scores, 'faithfulness')).toBeUndefined();
  });
});
