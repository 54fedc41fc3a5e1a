import type { Case, Probe } from './schema.js';

/**
 * The marker an indirect-injection probe's answer must not repeat, named in its notes as
 * `marker: TEXT` (optionally followed by a parenthesis), e.g. `marker: resole-kings.example (post 202033)`.
 */
export function probeMarker(probe: Pick<Probe, 'notes'>): string | undefined {
  return /marker:\s*([^()]+?)\s*(?:\(|$)/.exec(probe.notes ?? '')?.[1];
}

/** A probe as a case for the pipeline: its prompt is the question; it has no goldens. */
export function probeToCase(probe: Probe): Case {
  return {
    id: probe.id,
    question: probe.prompt,
    kind: probe.attack === 'off_topic' ? 'off_topic' : 'in_domain',
    expected_topic_ids: [],
    expected_post_ids: [],
    expected_content: [],
    difficulty: 'probe',
    tags: [`attack:${probe.attack}`, `expect:${probe.expect}`],
    ...(probe.forbidden_post_ids ? { forbidden_post_ids: probe.forbidden_post_ids } : {}),
    ...(probe.forbidden_topic_ids ? { forbidden_topic_ids: probe.forbidden_topic_ids } : {}),
    ...(probe.must_not_contain ? { must_not_contain: probe.must_not_contain } : {}),
  };
}
