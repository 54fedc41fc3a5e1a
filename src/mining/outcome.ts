/**
 * What `ragaudit mine` reports: counts per category, the rephrase rule's redraws and drops, the
 * ambiguous goldens, why fewer questions than asked were written, and the file's header lines.
 */
import type { StratumDraw } from './sample.js';
import { MAX_SHARED_TITLE_WORDS } from './rephrase.js';
import type { MinedCase } from './cases-yaml.js';
import type { PublicTopic } from './source.js';
import type { MineCategoryCount, MineInputs, MineOutcome } from './mine.js';
import type { TopicResult } from './questions.js';
import type { QuestionWriter } from './writers.js';

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

export function summarise(
  inputs: MineInputs,
  r: {
    db: string;
    writer: QuestionWriter;
    topics: readonly PublicTopic[];
    strata: readonly StratumDraw<PublicTopic>[];
    results: readonly TopicResult[];
    cases: readonly MinedCase[];
    wanted: number;
    ambiguous: number;
    perTopic: number;
  },
): MineOutcome {
  const categories = new Map<string, MineCategoryCount>();
  const cat = (name: string) => {
    const hit = categories.get(name);
    if (hit) return hit;
    const c = {
      category: name,
      topics: 0,
      quota: 0,
      written: 0,
      topics_used: 0,
      post_grain: 0,
      dropped_rule: 0,
      dropped_none: 0,
    };
    categories.set(name, c);
    return c;
  };
  for (const s of r.strata) {
    cat(s.category).topics += s.order.length;
    cat(s.category).quota += s.quota;
  }
  const used = new Set<number>();
  for (const x of r.results) {
    const c = cat(x.topic.category);
    if (x.case) {
      c.written++;
      if (!used.has(x.topic.topic_id)) c.topics_used++;
      used.add(x.topic.topic_id);
      if (x.case.expected_post_ids?.length) c.post_grain++;
    } else if (x.dropped === 'rule') c.dropped_rule++;
    else c.dropped_none++;
  }
  const sum = (f: (x: TopicResult) => number) => r.results.reduce((n, x) => n + f(x), 0);
  const tried = r.results.length;
  const droppedRule = sum((x) => (x.dropped === 'rule' ? 1 : 0));
  const written = r.cases.length;
  const available = r.topics.length;
  const shortfall =
    r.perTopic > 1
      ? perTopicShortfall(inputs.size, written, available, r.perTopic)
      : written >= inputs.size
        ? undefined
        : available < inputs.size
          ? `the database has ${available} public topic${available === 1 ? '' : 's'}, and a topic gives one question`
          : `${inputs.size - written} of the ${inputs.size} asked for were not written: their strata ran out of topics whose questions pass the rephrase rule`;
  return {
    file: inputs.out,
    database: r.db,
    mode: inputs.mode,
    writer: { label: r.writer.label, offline: r.writer.offline },
    asked: inputs.size,
    available,
    per_topic: r.perTopic,
    wanted: r.wanted,
    written,
    topics_used: used.size,
    tried,
    drawn: sum((x) => x.drawn),
    failed_rule: sum((x) => x.failed),
    redrawn: sum((x) => (x.case && x.failed > 0 ? 1 : 0)),
    dropped_rule: droppedRule,
    dropped_none: sum((x) => (x.dropped === 'none' ? 1 : 0)),
    dropped_rule_share: tried ? droppedRule / tried : 0,
    ambiguous: r.ambiguous,
    post_grain: r.cases.filter((c) => c.expected_post_ids?.length).length,
    categories: [...categories.values()].sort((a, b) =>
      a.category < b.category ? -1 : a.category > b.category ? 1 : 0,
    ),
    ...(shortfall ? { shortfall } : {}),
    cases: [...r.cases],
  };
}

/** Why fewer questions than asked were written, with up to `perTopic` per topic; undefined when all were. */
function perTopicShortfall(size: number, written: number, available: number, perTopic: number): string | undefined {
  if (written >= size) return undefined;
  const most = available * perTopic;
  const cap = `the database has ${available} public topic${available === 1 ? '' : 's'}, and a topic gives at most ${perTopic} questions (${most})`;
  const short = Math.min(size, most) - written;
  const ranOut = `their strata ran out of source posts (first posts and replies with enough content words) whose questions pass the rephrase rule`;
  if (most < size) return short > 0 ? `${cap}; ${short} more were not written: ${ranOut}` : cap;
  return `${size - written} of the ${size} asked for were not written: ${ranOut}`;
}

/** The unit the rephrase counts are of: topics, or with more than one question per topic, source posts. */
export function mineUnit(perTopic: number): string {
  return perTopic > 1 ? 'source posts' : 'topics';
}

/** The allocation in words (header and console), with more than one question per topic. */
export function allocationLine(o: Pick<MineOutcome, 'per_topic' | 'available'>): string {
  return `strata: category × the topic's commonest tag, proportional to public topics (largest remainder), each stratum's quota capped at ${o.per_topic} questions per topic (${o.available} topics × ${o.per_topic} = ${o.available * o.per_topic}); a topic's questions each from a different source post`;
}

export function headerLines(inputs: MineInputs, o: MineOutcome, attempts: number, postGrain: boolean): string[] {
  const date = (inputs.now ?? new Date()).toISOString().slice(0, 10);
  const k = o.per_topic;
  const unit = mineUnit(k);
  return [
    `command: ${inputs.command ?? `ragaudit mine --size ${inputs.size} --seed ${inputs.seed} --mode ${inputs.mode}${inputs.postGrain ? ' --post-grain' : ''}${k > 1 ? ` --per-topic ${k}` : ''}`}`,
    `seed ${inputs.seed} · size ${o.asked} · mode ${o.mode}${postGrain ? ' · post grain' : ''}${k > 1 ? ` · up to ${k} per topic` : ''} · language ${inputs.loaded.config.language ?? 'en'}`,
    `questions: ${o.writer.label}`,
    `database: ${o.database} (${o.available} public topics)`,
    `date: ${date}`,
    k > 1
      ? allocationLine(o)
      : `strata: category × the topic's commonest tag, proportional allocation (largest remainder)`,
    `written: ${o.written} of ${o.asked}${o.shortfall ? ` (${o.shortfall})` : ''}; ${o.post_grain} post grain${k > 1 ? `; from ${o.topics_used} topics` : ''}`,
    `rephrase rule (at most ${MAX_SHARED_TITLE_WORDS} title content words, ${attempts} tries per ${k > 1 ? 'source post' : 'topic'}): ${o.failed_rule} of ${o.drawn} questions drawn failed; ${o.redrawn} ${unit} passed on a redraw; ${o.dropped_rule} of ${o.tried} ${unit} dropped (${pct(o.dropped_rule_share)})${o.dropped_none ? `; ${o.dropped_none} ${unit} gave no question at all` : ''}`,
    `ambiguous goldens flagged: ${o.ambiguous} (kept, with mined.ambiguous)`,
  ];
}
