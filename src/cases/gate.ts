import type { GateRule } from './schema.js';

/** The first input-gate rule whose pattern matches the question (case-insensitive), if any. */
export function matchGate(rules: readonly GateRule[], question: string): GateRule | undefined {
  return rules.find((r) => new RegExp(r.pattern, 'iu').test(question));
}
