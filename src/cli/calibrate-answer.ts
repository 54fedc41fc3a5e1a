import { join, resolve } from 'node:path';
import type { Case } from '../cases/schema.js';
import { storedZoneThresholds, zoneOf, zoneThresholdProblems, type ZoneThresholds } from '../model/zones.js';
import { InputError } from '../errors.js';
import { markdownTable, textTable, fmt } from '../reports/format.js';
import { auditCase } from '../runs/audit-case.js';
import { forEachConcurrent } from '../runs/pool.js';
import { refuseSecrets, writeArtifact, writeJsonArtifact } from '../io/artifacts.js';
import { timestamp } from '../runs/results-file.js';
import type { CaseRecord, RunResult } from '../model/results.js';
import { meanN } from '../scoring/retrieval-metrics.js';
import type { CliIO } from './command.js';
import { loadWithOverrides, openContext, type PipelineArgs } from './common.js';
import { checkOutputDir } from './output-paths.js';
import { buildAuditSetup } from '../runs/audit-setup.js';
import { progressBar } from './progress.js';

/** Parses `--candidates "-4:0,-5:1"` into threshold pairs. */
export function parseCandidates(text: string): ZoneThresholds[] {
  return text
    .split(/[,;]\s*/)
    .filter(Boolean)
    .map((pair) => {
      const [a, w] = pair.split(':').map(Number);
      if (
        !Number.isFinite(a) ||
        !Number.isFinite(w) ||
        zoneThresholdProblems({ abstain_below: a!, weak_below: w! }).length
      )
        throw new InputError(`--candidates: '${pair}' is not ABSTAIN:WEAK with ABSTAIN < WEAK (e.g. -4:0)`);
      return { abstain_below: a!, weak_below: w! };
    });
}

/** Per zone and kind: stance counts (the judge's when present, else the pattern's) and faithfulness. */
export interface ZoneCell {
  n: number;
  stance: Record<string, number>;
  faithfulness: { mean: number | null; n: number };
  correct_abstention: { mean: number | null; n: number };
}

const stanceOf = (r: CaseRecord) =>
  String(
    (
      (r.scores.find((s) => s.name === 'judge_stance') ?? r.scores.find((s) => s.name === 'stance_pattern'))
        ?.details as { stance?: string } | undefined
    )?.stance ?? (r.status === 'gated' ? 'gated' : 'unknown'),
  );

/** Groups records by zone and kind. */
export function zoneCells(records: readonly CaseRecord[]): Record<string, ZoneCell> {
  const out: Record<string, ZoneCell> = {};
  const groups = new Map<string, CaseRecord[]>();
  for (const r of records) {
    if (!r.zone || r.status !== 'ok') continue;
    const key = `${r.zone}/${r.kind}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  for (const [key, rs] of [...groups.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const stance: Record<string, number> = {};
    for (const r of rs) stance[stanceOf(r)] = (stance[stanceOf(r)] ?? 0) + 1;
    const score = (name: string) => meanN(rs.map((r) => r.scores.find((s) => s.name === name)?.value));
    const abst = score('correct_abstention');
    out[key] = {
      n: rs.length,
      stance,
      faithfulness: score('faithfulness'),
      correct_abstention: abst.n ? abst : score('correct_abstention_pattern'),
    };
  }
  return out;
}

/**
 * `calibrate RUN.json --answer`: for each candidate (abstain_below, weak_below), the cases whose
 * zone changes against the base run are generated and judged again (the response cache serves
 * anything already asked); the others keep their base records. Reports stance and faithfulness
 * per zone for the base and each setting.
 */
export async function runZoneAB(
  base: RunResult,
  basePath: string,
  candidates: ZoneThresholds[],
  values: PipelineArgs,
  io: CliIO,
): Promise<number> {
  if (base.kind !== 'run')
    throw new InputError(`${basePath}: --answer needs a 'run' results file (with answers), got '${base.kind}'`);
  if (!values.config && base.config_source !== '(built-in demo)')
    throw new InputError(
      `calibrate --answer: pass --config (the results file keeps its config without secrets, so it cannot call the models again)`,
    );
  const loaded = loadWithOverrides({ ...values, cases: undefined } as PipelineArgs, io);
  const { ctx, warnings } = await openContext(values, loaded, io);
  try {
    const setup = buildAuditSetup(ctx, io.env);
    const generator = setup.deps.generator;
    const judge = setup.judge;
    const baseZones = storedZoneThresholds(base.config.zones);
    const settings: { name: string; zones: ZoneThresholds | undefined; changed: string[]; records: CaseRecord[] }[] = [
      {
        name: `base ${fmt(baseZones?.abstain_below ?? null, 1)}:${fmt(baseZones?.weak_below ?? null, 1)}`,
        zones: baseZones ?? undefined,
        changed: [],
        records: base.cases,
      },
    ];
    for (const zones of candidates) {
      const moved = base.cases.filter(
        (r) => r.status === 'ok' && r.zone && r.top1_score !== undefined && zoneOf(r.top1_score, zones) !== r.zone,
      );
      const records = new Map(base.cases.map((r) => [r.id, r] as const));
      const deps = { ...setup.deps, ctx: { ...ctx, config: { ...ctx.config, zones: { ...zones } } } };
      const bar = progressBar(io, `zones ${zones.abstain_below}:${zones.weak_below}`);
      let done = 0;
      await forEachConcurrent(moved, ctx.config.generator.concurrency, async (r) => {
        const c: Case = {
          id: r.id,
          question: r.question,
          kind: r.kind as Case['kind'],
          expected_topic_ids: r.expected_topic_ids,
          expected_post_ids: r.expected_post_ids,
          expected_content: r.expected_content,
          difficulty: r.difficulty,
          tags: r.tags,
        };
        records.set(r.id, await auditCase(deps, c));
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
    const report = settings.map((s) => ({
      setting: s.name,
      zones: s.zones,
      regenerated: s.changed,
      errors: s.records.filter((r) => r.status === 'error').map((r) => r.id),
      cells: zoneCells(s.records),
    }));
    const header = ['setting', 'zone/kind', 'n', 'stance', 'faithfulness', 'correct abstention'];
    const rows = report.flatMap((s) =>
      Object.entries(s.cells).map(([k, c]) => [
        s.setting,
        k,
        String(c.n),
        Object.entries(c.stance)
          .map(([x, n]) => `${x} ${n}`)
          .join(' · '),
        `${fmt(c.faithfulness.mean, 2)} (n=${c.faithfulness.n})`,
        `${fmt(c.correct_abstention.mean, 2)} (n=${c.correct_abstention.n})`,
      ]),
    );
    const changed = report
      .slice(1)
      .map(
        (s) =>
          `${s.setting}: ${s.regenerated.length} cases change zone and were regenerated${s.regenerated.length ? ` (${s.regenerated.join(', ')})` : ''}${s.errors.length ? `; errors: ${s.errors.join(', ')}` : ''}`,
      );
    const outDir = resolve(io.cwd, values.out ?? ctx.config.output_dir);
    checkOutputDir(outDir, values.out ? '--out' : 'output_dir');
    const stem = join(outDir, `${timestamp()}-${base.name}-zone-ab`);
    const json = {
      schema_version: 1,
      kind: 'zone-ab',
      base: basePath,
      judge: judge?.component ?? null,
      generator: { id: generator.id, offline: generator.offline },
      warnings,
      settings: report,
    };
    const md = [
      `# Zone A/B from ${basePath}`,
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
    io.out(`${changed.join('\n')}\n\n${textTable(header, rows)}\n\nzone A/B: ${stem}.json\n`);
    return report.some((s) => s.errors.length) ? 1 : 0;
  } finally {
    await ctx.close();
  }
}
