import { createHash } from 'node:crypto';
import { loadProbes } from '../cases/load.js';
import { probeMarker, probeToCase } from '../cases/probes.js';
import type { Probe } from '../cases/schema.js';
import { resolveFrom, type LoadedConfig } from '../config/load.js';
import { InputError, RagauditError } from '../errors.js';
import type { CaseRecord, RunResult } from '../model/results.js';
import { findScore } from '../model/scores.js';
import { componentsMarkdown } from '../reports/digest.js';
import { markdownTable } from '../reports/format.js';
import { runAudit } from '../runs/audit-run.js';
import { buildAuditSetup } from '../wiring/audit-setup.js';
import type { ProbeSummary } from '../model/summary.js';
import { summariseProbes } from '../summary/probe-summary.js';
import { configDigest } from '../store/config-digest.js';
import { publicConfig, writeResults } from '../store/results-file.js';
import { caseSelection, resumedSelection } from '../store/resume-selection.js';
import { forbiddenFindings } from '../scoring/forbidden.js';
import { failuresText, probeVerdict } from '../scoring/probe-verdict.js';
import { checkSafety, safetyScore } from '../scoring/safety.js';
import { summariseVerdicts } from '../scoring/verdict.js';
import type { AppEnv, AppHooks } from './hooks.js';
import { announceComponents, openContext, outputDir } from './pipeline.js';

/** The canary placed in the system prompt: fixed per config, so cached answers stay valid. */
export function canaryFor(config: Record<string, unknown>): string {
  return `RGA-CANARY-${createHash('sha256')
    .update(`canary:${configDigest(config)}`)
    .digest('hex')
    .slice(0, 12)
    .toUpperCase()}`;
}

export const PROBE_HEADER = [
  'attack',
  'n',
  'passed',
  'failed',
  'canary leaks',
  'markers repeated',
  'forbidden',
  'gated',
  'errors',
  'judge verdicts',
];

/** The per-attack table rows. */
export function probeRows(s: ProbeSummary): string[][] {
  const row = (name: string, a: ProbeSummary['all']) => [
    name,
    String(a.n),
    String(a.passed),
    String(a.failed),
    String(a.leaks),
    String(a.markers_repeated),
    a.forbidden === undefined ? '–' : String(a.forbidden),
    String(a.gated),
    String(a.errors),
    Object.entries(a.judge)
      .map(([k, v]) => `${k} ${v}`)
      .join(' · ') || '–',
  ];
  return [...Object.entries(s.by_attack).map(([k, a]) => row(k, a)), row('all', s.all)];
}

/**
 * Whether a finished probe passed and why, from its verdict (each failed check named); a record
 * without one (a file written before probes had verdicts) reads its safety score. Null for an
 * errored probe.
 */
export function probeOutcome(r: CaseRecord): { passed: boolean; why: string } | null {
  if (r.verdict) return { passed: r.verdict.passed, why: r.verdict.passed ? safetyReason(r) : failuresText(r.verdict) };
  const safety = findScore(r.scores, 'safety');
  return safety ? { passed: safety.value === 1, why: safety.reason ?? '' } : null;
}

const safetyReason = (r: CaseRecord) => findScore(r.scores, 'safety')?.reason ?? '';

export function probeMarkdown(result: RunResult, s: ProbeSummary): string {
  const rows = result.cases.map((r) => {
    const outcome = probeOutcome(r);
    return [
      r.id,
      r.probe?.attack ?? '',
      r.probe?.expect ?? '',
      r.status,
      outcome ? (outcome.passed ? 'pass' : 'FAIL') : '–',
      outcome?.why ?? r.error?.message ?? '',
      (r.answer ?? '').slice(0, 160),
    ];
  });
  return [
    `# Safety probes: ${result.name}`,
    '',
    `${result.created_at} · config ${result.config_source} (${result.config_digest})`,
    '',
    componentsMarkdown(result),
    '',
    '## By attack type',
    '',
    markdownTable(PROBE_HEADER, probeRows(s)),
    '',
    '## Probes',
    '',
    markdownTable(['probe', 'attack', 'expect', 'status', 'result', 'why', 'answer (start)'], rows),
    '',
  ].join('\n');
}

export interface ProbeInputs extends AppEnv {
  loaded: LoadedConfig;
  db?: string | undefined;
  /** Probe files or directories, resolved; default: the config's probes. */
  probes?: readonly string[] | undefined;
  repeat: number;
  resume?: string | undefined;
}

export interface ProbeOutcome {
  result: RunResult;
  summary: ProbeSummary;
  files: { json: string; md: string };
}

/**
 * The probes of a probe run as cases, with what a run over them needs: the canary (its clause is
 * appended to the config's system prompt here), what must not leak, and each record's probe.
 */
export function probeCases(inputs: Pick<ProbeInputs, 'loaded' | 'probes' | 'resume' | 'cwd'>) {
  const { loaded } = inputs;
  // A resume without --probes runs the probes the interrupted run was started on.
  const given = resumedSelection({ cases: inputs.probes }, inputs.resume, outputDir(loaded, inputs.cwd)).cases;
  if (!given?.length && !loaded.config.probes.length)
    throw new InputError(`probe: ${loaded.source} names no probes: add 'probes: [FILE]' to it or pass --probes FILE`);
  const probes = loadProbes(given?.length ? [...given] : loaded.config.probes.map((p) => resolveFrom(loaded, p)));
  const byId = new Map<string, Probe>(probes.map((p) => [p.value.id, p.value]));
  const canary = canaryFor(publicConfig(loaded.config));
  const probeInfo = (id: string) => ({ attack: byId.get(id)!.attack, expect: byId.get(id)!.expect });
  loaded.config.evidence.system_append = [...loaded.config.evidence.system_append, 'canary'];
  // The judge sees what must not leak: the canary, and an indirect probe's planted marker.
  const mustNotLeak = (r: { id: string }) => [canary, probeMarker(byId.get(r.id)!)].filter(Boolean).join('\n');
  const cases = probes.map((p) => ({ ...p, value: probeToCase(p.value) }));
  return { byId, canary, probeInfo, mustNotLeak, cases, given };
}

/**
 * `probe`: the safety probes through the whole pipeline with a canary in the system prompt;
 * each answer checked deterministically and given its verdict (src/scoring/probe-verdict.ts), the
 * results and their digest written.
 */
export async function runProbes(inputs: ProbeInputs, hooks: AppHooks): Promise<ProbeOutcome> {
  const { loaded } = inputs;
  const { byId, canary, probeInfo, mustNotLeak, cases, given } = probeCases(inputs);
  const { ctx, warnings } = await openContext({ ...inputs, models: true }, hooks);
  try {
    const { deps, judge } = buildAuditSetup(ctx, inputs.env, {
      repeat: inputs.repeat,
      mustNotLeak,
      clauseVars: { canary },
      onBatchEvent: (text) => hooks.event({ kind: 'status', text }),
    });
    announceComponents(ctx, hooks);
    const bar = hooks.progress('probe');
    const out = outputDir(loaded, inputs.cwd);
    const { result, stamp } = await runAudit(
      {
        ...deps,
        // The record learns it is a probe before the judge sees it, so the safety verdict runs.
        ...(judge
          ? { judge: (record, system) => ((record.probe = probeInfo(record.id)), judge.caseJudge(record, system)) }
          : {}),
      },
      cases,
      warnings,
      {
        outputDir: out,
        kind: 'probe',
        onProgress: bar.update,
        onLedger: (file) => hooks.event({ kind: 'ledger', command: 'probe', file }),
        ...(inputs.resume ? { resume: inputs.resume } : {}),
        selection: caseSelection(given, undefined),
        finish: async (record) => {
          const probe = byId.get(record.id)!;
          record.probe = probeInfo(record.id);
          if (record.status === 'error') return;
          const check = checkSafety(probe, record.answer, record.status === 'gated', canary, ctx.config.evidence.cta);
          record.scores.push(safetyScore(check));
          const forbidden = forbiddenFindings(record, {
            sources: record.sources ?? [],
            answer: record.answer ?? '',
            citations: record.citations ?? [],
          });
          record.verdict = probeVerdict({ expect: probe.expect, check, marker: probeMarker(probe), forbidden });
        },
        summarisers: { probes: summariseProbes },
      },
    );
    bar.stop();
    const summary = result.summary.probes;
    if (!summary) throw new RagauditError('probe: the run ended without a probe summary');
    result.summary.verdicts = summariseVerdicts(result.cases);
    const files = writeResults(out, result, probeMarkdown(result, summary), { secrets: ctx.secrets, stamp });
    hooks.event({ kind: 'results-written', file: files.json });
    return { result, summary, files };
  } finally {
    await ctx.close();
  }
}
