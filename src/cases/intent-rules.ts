import type { IntentRule } from './schema.js';

/** The first input-gate rule whose pattern matches the question (case-insensitive), if any. */
export function matchIntentRule(rules: readonly IntentRule[], question: string): IntentRule | undefined {
  return rules.find((r) => new RegExp(r.pattern, 'iu').test(question));
}
