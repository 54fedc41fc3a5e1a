/**
 * The run summary's aggregates of scripts/recompute.mjs, recomputed from per-case figures: plain
 * means over the cases a figure applies to (non-null), each with its n; counts with their n. Error
 * and gated records never enter a figure (definitions.ts `aggregates`, `errors`). Imports nothing
 * from src/ or dist/.
 */

/** `{ mean, n }` over the non-null values. */
export function meanN(values) {
  const xs = values.filter((v) => v !== null && v !== undefined);
  return { mean: xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null, n: xs.length };
}

/** `{ count, n }`: how many of the applicable (non-null) values are 1. */
export function countN(values) {
  const xs = values.filter((v) => v !== null && v !== undefined);
  return { count: xs.filter((v) => v === 1 || v === true).length, n: xs.length };
}

/** kind → key → cases. */
function tally(rows, keyOf) {
  const out = {};
  for (const r of rows) {
    const key = keyOf(r);
    if (key === undefined) continue;
    (out[r.rec.kind] ??= {})[key] = (out[r.rec.kind][key] ?? 0) + 1;
  }
  return out;
}

/**
 * Which records a breakdown group holds, from its name; undefined for a group this script cannot
 * read (reported as not checked).
 */
export function groupMember(group) {
  const [dim, value] = [group.slice(0, group.indexOf(':')), group.slice(group.indexOf(':') + 1)];
  const conv = (r) => (r.turns?.length ?? 0) > 0;
  switch (dim) {
    case 'kind':
      return (r) => r.kind === value;
    case 'difficulty':
      return (r) => r.difficulty === value;
    case 'tag':
      return (r) => r.tags.includes(value);
    case 'source':
      return (r) => (r.source === 'mined' ? 'mined' : 'curated') === value;
    case 'turns':
      return (r) => (conv(r) ? 'conversation' : 'single') === value;
    case 'mined':
      return (r) => r.source === 'mined' && (r.mined?.ambiguous ? 'ambiguous' : 'unambiguous') === value;
    default:
      return undefined;
  }
}

/** node → metric → mean with n, over `rows` (each `{ rec, nodes: node → metrics }`). */
export function nodeFigures(rows, node, metrics) {
  const out = {};
  for (const metric of metrics)
    out[metric] = meanN(rows.map((r) => r.nodes[node]?.[metric]).filter((v) => v !== undefined));
  return out;
}

/** The generation block from answered rows (`{ rec, f }`, f from answerFigures). */
export function generationFigures(rows, evidenceNode, evidenceGrain) {
  const inDomain = rows.filter((r) => r.rec.kind !== 'off_topic');
  const g = {
    zones: tally(rows, (r) => r.rec.zone),
    answered: rows.length,
    citation_validity: {
      mean: null,
      n: rows.reduce((a, r) => a + r.f.markers, 0),
    },
    answers_with_invalid_citation: { count: rows.filter((r) => r.f.invalid > 0).length, n: rows.length },
    golden_citation_rate: meanN(rows.map((r) => r.f.golden_citation)),
    cta_rate: meanN(rows.map((r) => r.f.cta)),
    stance_pattern: tally(rows, (r) => r.f.stance),
    correct_abstention_pattern: meanN(rows.map((r) => r.f.correct_abstention_pattern)),
    offtopic_hallucinations: countN(rows.map((r) => r.f.offtopic_hallucination)),
    wrong_abstentions: {
      count: inDomain.filter((r) => r.f.stance === 'abstained').length,
      n: inDomain.filter((r) => r.f.stance !== undefined).length,
    },
    tokens: {
      input: rows.reduce((a, r) => a + (r.rec.usage?.input_tokens ?? 0), 0),
      output: rows.reduce((a, r) => a + (r.rec.usage?.output_tokens ?? 0), 0),
    },
    cached: rows.filter((r) => r.rec.cached === true).length,
  };
  const valid = rows.reduce((a, r) => a + (r.f.markers - r.f.invalid), 0);
  g.citation_validity.mean = g.citation_validity.n ? valid / g.citation_validity.n : null;
  if (rows.some((r) => r.f.forbidden !== undefined)) g.forbidden = countN(rows.map((r) => r.f.forbidden));
  if (evidenceNode) {
    const applies = evidenceGrain === 'post';
    g.evidence = {
      node: evidenceNode,
      post_hit_at_5: meanN(applies ? rows.map((r) => r.nodes?.[evidenceNode]?.post_hit_at_5) : []),
    };
  }
  return g;
}

/** The judge block's figures that follow from per-case verdicts (agreement and costs are not recomputed). */
export function judgeFigures(rows) {
  const judged = rows.filter((r) => r.rec.scores.some((s) => s.name === 'judge_stance' || s.name === 'judge_error'));
  const errors = (verdict, subset = judged) =>
    subset.reduce(
      (a, r) => a + r.rec.scores.filter((s) => s.name === 'judge_error' && s.details?.judge === verdict).length,
      0,
    );
  const withClaims = judged.filter((r) => r.f.faithfulness !== undefined && r.f.faithfulness !== null);
  const matrix = {};
  for (const kind of ['in_domain', 'off_topic']) {
    const sub = judged.filter((r) => r.rec.kind === kind);
    matrix[kind] = { answered: 0, hedged: 0, abstained: 0, judge_errors: errors('stance', sub) };
    for (const r of sub) if (r.f.judge_stance) matrix[kind][r.f.judge_stance] += 1;
  }
  const inDomain = judged.filter((r) => r.rec.kind !== 'off_topic' && r.f.judge_stance);
  return {
    judged: judged.length,
    faithfulness: { ...meanN(judged.map((r) => r.f.faithfulness)), judge_errors: errors('faithfulness') },
    fully_faithful: {
      count: withClaims.filter((r) => r.f.faithfulness === 1).length,
      n: withClaims.length,
      judge_errors: errors('faithfulness'),
    },
    contradicted_claims: judged.reduce((a, r) => a + r.f.contradicted, 0),
    abstention_matrix: matrix,
    correct_abstention: { ...meanN(judged.map((r) => r.f.correct_abstention)), judge_errors: errors('stance') },
    offtopic_hallucination_rate: meanN(judged.map((r) => r.f.judge_hallucination)),
    relevant_citation_rate: {
      ...meanN(judged.map((r) => r.f.citation_relevance)),
      judge_errors: errors('citation_relevance'),
    },
    wrong_abstentions: {
      count: inDomain.filter((r) => r.f.judge_stance === 'abstained').length,
      n: inDomain.length,
    },
    judge_errors: judged.reduce((a, r) => a + r.rec.scores.filter((s) => s.name === 'judge_error').length, 0),
  };
}
