/**
 * Answers recorded elsewhere (`ragaudit score ANSWERS.jsonl`, docs/targets.md): one JSON object
 * per line with the case `id`, the answer and the sources, in the default shape
 * (`{id, answer, sources}`) or the one the config's `target.response` maps. They are joined to
 * the cases by id and scored as a live target's answers are (src/runs/target-case.ts).
 */
import { basename } from 'node:path';
import type { TargetConfig } from '../config/target-schema.js';
import { TargetSchema } from '../config/target-schema.js';
import { InputError } from '../errors.js';
import { jsonlLines } from '../io/jsonl.js';
import { atPath, parseResponse, type Target, type TargetSource } from './target.js';

/** One recorded answer and the line it came from. */
export interface RecordedAnswer {
  answer: string;
  sources: TargetSource[];
  line: number;
}

/** The response mapping answers are read with: the config's target section's, else the default shape. */
export function answersMapping(target: TargetConfig | undefined): TargetConfig {
  return target ?? TargetSchema.parse({ url: 'http://recorded.invalid' });
}

/** Every answer of the file by case id; a line that is not one is an input error naming file, line and field. */
export function loadRecordedAnswers(file: string, mapping: TargetConfig): Map<string, RecordedAnswer> {
  const out = new Map<string, RecordedAnswer>();
  const r = mapping.response;
  for (const { text, no } of jsonlLines(file)) {
    if (!text.trim()) continue;
    const at = `${file}:${no}`;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw new InputError(`${at}: not a JSON object (${(e as Error).message})`);
    }
    const id = atPath(value, 'id');
    if (typeof id !== 'string' || !id) throw new InputError(`${at}: id: must be the case id (a string)`);
    if (out.has(id)) throw new InputError(`${at}: id: '${id}' already answered on line ${out.get(id)!.line}`);
    const answer = atPath(value, r.answer);
    if (typeof answer !== 'string' || !answer.trim())
      throw new InputError(`${at}: ${r.answer}: must be the answer text (a non-empty string)`);
    const sources = atPath(value, r.sources);
    if (sources !== undefined && !Array.isArray(sources))
      throw new InputError(`${at}: ${r.sources}: must be a list of sources`);
    out.set(id, { ...parseResponse(value, mapping, file), line: no });
  }
  return out;
}

/** The recorded answers as a target: each case is answered from its line (no request is made). */
export function recordedTarget(file: string, answers: ReadonlyMap<string, RecordedAnswer>, ranked: boolean): Target {
  return {
    id: `target: recorded ${basename(file)}`,
    offline: false,
    ranked,
    async ask({ id }) {
      const a = answers.get(id);
      if (!a) throw new InputError(`${file}: no answer for case ${id}`);
      return { answer: a.answer, sources: a.sources, latencyMs: 0 };
    },
  };
}
