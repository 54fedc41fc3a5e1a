/**
 * The registry of judge criteria: every verdict the judge gives, in the order the judge asks them
 * and the stored files list them. The judges, the per-case scores, the judge summary, agreement,
 * stability, PPI and the digest read their criteria from here (src/judge/criteria/types.ts says
 * what a criterion declares).
 *
 * Adding a criterion is its module beside these, its line below and its prompt in prompts/ (and
 * prompts/<language>/). Its scores are plain scores that may carry the judge's details (tokens,
 * repeats, flags); only scores with typed details of their own add a member to the model's score
 * union (src/model/scores.ts). A figure of it becomes a release-gate metric by a registry entry
 * (src/scoring/registry.ts).
 */
import { citationRelevance } from './citation-relevance.js';
import { faithfulness } from './faithfulness.js';
import { nuggets } from './nuggets.js';
import { safety } from './safety.js';
import { stance } from './stance.js';
import type { Criterion } from './types.js';

const REGISTRY: Criterion[] = [faithfulness, stance, citationRelevance, safety, nuggets] as Criterion[];

/** Every criterion, in registry order. */
export function criteria(): readonly Criterion[] {
  return REGISTRY;
}

/** The criterion of `name` (a name not in the registry is a programming error). */
export function criterion(name: string): Criterion {
  const c = REGISTRY.find((x) => x.name === name);
  if (!c) throw new Error(`internal: no judge criterion ${name} in the registry`);
  return c;
}

/**
 * Adds a criterion after the registered ones (a program embedding the audit, or a test); returns
 * the function that removes it again. A name already registered is a programming error.
 */
export function registerCriterion(c: Criterion): () => void {
  if (REGISTRY.some((x) => x.name === c.name)) throw new Error(`internal: judge criterion ${c.name} is registered`);
  REGISTRY.push(c);
  return () => {
    const i = REGISTRY.indexOf(c);
    if (i >= 0) REGISTRY.splice(i, 1);
  };
}

/** Every score name the judge writes (a re-judge removes these before judging again). */
export function judgeScoreNames(): readonly string[] {
  return [...REGISTRY.flatMap((c) => c.scoreNames), 'judge_error'];
}

export type { Criterion } from './types.js';
export { citationRelevance, faithfulness, nuggets, safety, stance };
