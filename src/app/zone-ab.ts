import { join, resolve } from 'node:path';
import type { Case } from '../cases/schema.js';
import { zoneOf, type ZoneThresholds } from '../model/zones.js';
import { storedConfig } from '../config/stored.js';
import { InputError } from '../errors.js';
import { markdownTable, fmt } from '../reports/format.js';
import { auditCaseOutcome } from '../runs/audit-case.js';
import { RetrievalFeed } from '../runs/retrieval-feed.js';
import { knownQueries } from '../wiring/condenser.js';
import { forEachConcurrent } from '../runs/concurrency.js';
import { refuseSecrets, writeArtifact, writeJsonArtifact } from '../io/artifacts.js';
import { timestamp } from '../store/results-file.js';
import { findScore } from '../model/scores.js';
import type { CaseRecord, RunResult } from '../model/results.js';
import { offtopicHallucination } from '../scoring/definitions.js';
import { meanN } from '../scoring/retrieval-metrics.js';
import { buildAuditSetup } from '../wiring/audit-setup.js';
import type { LoadedConfig } from '../config/load.js';
import type { AppEnv, AppHooks } from './hooks.js';
import { checkOutputDir } from './output-paths.js';
import { openContext } from './pipeline.js';

/**
 * Per zone and kind (or over a setting's answers, its total): stance counts (the judge's when
 * present, else the pattern's), faithfulness, correct abstention, wrong abstentions (in-domain
 * cases abstained, out of the in-domain ones) and off-topic hallucinations (off-topic answers
 * that assert with citations, out of the off-topic ones).
 */
export interface ZoneCell {
  n: number;
  stance: Record<string, number>;
  faithfulness: { mean: number | null; n: number };
  correct_abstention: { mean: number | null; n: number };
  wrong_abstentions: { count: number; n: number };
  offtopic_hallucinations: { count: number; n: number };
}

const stanceOf = (r: CaseRecord): string =>
  findScore(r.scores, 'judge_stance')?.details?.stance ??
  findScore(r.scores, 'stance_pattern')?.details?.stance ??
  (r.status === 'gated' ? 'gated' : 'unknown');

/** The figures of a group of answered records. */
export function zoneCell(rs: readonly CaseRecord[]): ZoneCell {
  const stance: Record<string, number> = {};
  for (const r of rs) stance[stanceOf(r)] = (stance[stanceOf(r)] ?? 0) + 1;
  const score = (name: string) => meanN(rs.map((r) => r.scores.find((s) => s.name === name)?.value));
  const abst = score('correct_abstention');
  const inDomain = rs.filter((r) => r.kind !== 'off_topic');
  const offTopic = rs.filter((r) => r.kind === 'off_topic');
  return {
    n: rs.length,
    stance,
    faithfulness: score('faithfulness'),
    correct_abstention: abst.n ? abst : score('correct_abstention_pattern'),
    wrong_abstentions: { count: inDomain.filter((r) => stanceOf(r) === 'abstained').length, n: inDomain.length },
    offtopic_hallucinations: {
      count: offTopic.filter((r) => offtopicHallucination(r.kind, stanceOf(r), r.citations?.length ?? 0) === 1).length,
      n: offTopic.length,
    },
  };
}

/** The answered records of a setting (status ok, with a zone). */
const answered = (records: readonly CaseRecord[]) => records.filter((r) => r.zone && r.status === 'ok');

/** Groups records by zone and kind. */
export function zoneCells(records: readonly CaseRecord[]): Record<string, ZoneCell> {
  const groups = new Map<string, CaseRecord[]>();
  for (const r of answered(records)) {
    const key = `${r.zone}/${r.kind}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return Object.fromEntries(
    [...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([key, rs]) => [key, zoneCell(rs)]),
  );
}

/** The case a stored record was made from, as generating it again needs it (a conversation keeps its history). */
function caseOfRecord(r: CaseRecord): Case {
  return {
    id: r.id,
    question: r.question,
    kind: r.kind as Case['kind'],
    expected_topic_ids: r.expected_topic_ids,
    expected_post_ids: r.expected_post_ids,
    expected_content: r.expected_content,
    difficulty: r.difficulty,
    tags: r.tags,
    ...(r.turns?.length ? { turns: r.turns, needs_history: r.needs_history ?? true } : {}),
  };
}

/** The base of `calibrate --answer`: a 'run' file, and a config to call the models again. */
export function checkZoneABBase(base: RunResult, basePath: string, configGiven: boolean): void {
  if (base.kind !== 'run')
    throw new InputError(`${basePath}: --answer needs a 'run' results file (with answers), got '${base.kind}'`);
  if (!configGiven && base.config_source !== '(built-in demo)')
    throw new InputError(
      `calibrate --answer: pass --config (the results file keeps its config without secrets, so it cannot call the models again)`,
    );
}

export interface ZoneABInputs extends AppEnv {
  base: RunResult;
  basePath: string;
  candidates: ZoneThresholds[];
  /** The config that calls the models (checked with checkZoneABBase first). */
  loaded: LoadedConfig;
  db?: string | undefined;
  /** The directory given with --out, as given; default: the config's output_dir. */
  out?: string | undefined;
}

export interface ZoneABOutcome {
  /** One line per candidate: the cases that changed zone and were regenerated. */
  changed: string[];
  header: string[];
  rows: string[][];
  /** The zone A/B file (its .md digest beside it). */
  json: string;
  /** Some regenerated case ended in error. */
  errors: boolean;
}

/**
 * `calibrate RUN.json --answer`: for each candidate (abstain_below, weak_below), the cases whose
 * zone changes against the base run are generated and judged again (the response cache serves
 * anything already asked); the others keep their base records. Reports stance and faithfulness
 * per zone for the base and each setting.
 */
export async function runZoneAB(inputs: ZoneABInputs, hooks: AppHooks): Promise<ZoneABOutcome> {
  const { base, candidates } = inputs;
  const { ctx, warnings } = await openContext({ ...inputs, models: true }, hooks);
  try {
    const setup = buildAuditSetup(ctx, inputs.env);
    const generator = setup.deps.generator;
    const judge = setup.judge;
    const baseZones = storedConfig(base).zones ?? null;
    const settings: { name: string; zones: ZoneThresholds | undefined; changed: string[]; records: CaseRecord[] }[] = [
      {
        name: `base ${fmt(baseZones?.abstain_below ?? null, 1)}:${fmt(baseZones?.weak_below ?? null, 1)}`,
        zones: baseZones ?? undefined,
        changed: [],
        records: base.cases,
      },
    ];
    const movedBy = candidates.map((zones) =>
      base.cases.filter(
        (r) => r.status === 'ok' && r.zone && r.top1_score !== undefined && zoneOf(r.top1_score, zones) !== r.zone,
      ),
    );
    // A case that moves under several candidates is retrieved once for all of them (batched ahead);
    // a conversation whose query the generator condenses is retrieved once that query is known.
    const feed = new RetrievalFeed(
      ctx.graph,
      movedBy.flat().flatMap((r) => knownQueries(setup.deps.condenser, caseOfRecord(r))),
      // No latency figure comes of these retrievals: no sample.
      { latencySample: 0 },
    );
    const retrieve = (question: string) => feed.get(question);
    try {
      for (const [k, zones] of candidates.entries()) {
        const moved = movedBy[k]!;
        const records = new Map(base.cases.map((r) => [r.id, r] as const));
        const deps = { ...setup.deps, ctx: { ...ctx, config: { ...ctx.config, zones: { ...zones } } } };
        const bar = hooks.progress(`zones ${zones.abstain_below}:${zones.weak_below}`);
        let done = 0;
        await forEachConcurrent(moved, ctx.config.generator.concurrency, async (r) => {
          records.set(r.id, (await auditCaseOutcome(deps, caseOfRecord(r), retrieve)).record);
          bar.update(++done, moved.length);
        });
        bar.stop();
        settings.push({
          name: `${zones.abstain_below}:${zones.weak_below}`,
          zones,
          changed: moved.map((r) => r.id),
          records: base.cases.map((r) => records.get(r.id)!),
        });
      }
    } finally {
      // Nothing may still be reading when the database closes.
      await feed.settle();
    }
    const report = settings.map((s) => ({
      setting: s.name,
      zones: s.zones,
      regenerated: s.changed,
      errors: s.records.filter((r) => r.status === 'error').map((r) => r.id),
      cells: zoneCells(s.records),
      total: zoneCell(answered(s.records)),
    }));
    const header = [
      'setting',
      'zone/kind',
      'n',
      'stance',
      'faithfulness',
      'correct abstention',
      'wrong abstentions',
      'off-topic hallucinations',
    ];
    const countN = (c: { count: number; n: number }) => (c.n ? `${c.count}/${c.n}` : '–');
    const cellRow = (setting: string, k: string, c: ZoneCell) => [
      setting,
      k,
      String(c.n),
      Object.entries(c.stance)
        .map(([x, n]) => `${x} ${n}`)
        .join(' · '),
      `${fmt(c.faithfulness.mean, 2)} (n=${c.faithfulness.n})`,
      `${fmt(c.correct_abstention.mean, 2)} (n=${c.correct_abstention.n})`,
      countN(c.wrong_abstentions),
      countN(c.offtopic_hallucinations),
    ];
    // Each setting's zones, then its total: what the thresholds change over all answers.
    const rows = report.flatMap((s) => [
      ...Object.entries(s.cells).map(([k, c]) => cellRow(s.setting, k, c)),
      cellRow(s.setting, 'total', s.total),
    ]);
    const changed = report
      .slice(1)
      .map(
        (s) =>
          `${s.setting}: ${s.regenerated.length} cases change zone and were regenerated${s.regenerated.length ? ` (${s.regenerated.join(', ')})` : ''}${s.errors.length ? `; errors: ${s.errors.join(', ')}` : ''}`,
      );
    const outDir = resolve(inputs.cwd, inputs.out ?? ctx.config.output_dir);
    checkOutputDir(outDir, inputs.out ? '--out' : 'output_dir');
    const stem = join(outDir, `${timestamp()}-${base.name}-zone-ab`);
    const json = {
      schema_version: 1,
      kind: 'zone-ab',
      base: inputs.basePath,
      judge: judge?.component ?? null,
      generator: { id: generator.id, offline: generator.offline },
      warnings,
      settings: report,
    };
    const md = [
      `# Zone A/B from ${inputs.basePath}`,
      '',
      ...changed.map((l) => `- ${l}`),
      '',
      markdownTable(header, rows),
      '',
    ].join('\n');
    // Both are checked before the first is written: a refused output leaves neither.
    refuseSecrets(`${stem}.md`, md, ctx.secrets);
    writeJsonArtifact(`${stem}.json`, json, { secrets: ctx.secrets });
    writeArtifact(`${stem}.md`, md, { secrets: ctx.secrets });
    return { changed, header, rows, json: `${stem}.json`, errors: report.some((s) => s.errors.length > 0) };
  } finally {
    await ctx.close();
  }
}
