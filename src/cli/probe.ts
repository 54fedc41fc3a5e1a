import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadProbes } from '../cases/load.js';
import type { Probe } from '../cases/schema.js';
import { resolveFrom } from '../config/load.js';
import { InputError, redact } from '../errors.js';
import { componentsMarkdown } from '../reports/digest.js';
import { markdownTable, textTable } from '../reports/format.js';
import { runAudit } from '../runs/audit-run.js';
import type { ProbeSummary } from '../model/summary.js';
import { summariseProbes } from '../runs/probe-summary.js';
import { configDigest, publicConfig, writeResults } from '../runs/results-file.js';
import type { RunResult } from '../model/results.js';
import { checkSafety, safetyScore } from '../scoring/safety.js';
import { parseOrThrow, type Command } from './command.js';
import { announceComponents, loadWithOverrides, openContext, outputDir } from './common.js';
import { buildAuditSetup } from '../runs/audit-setup.js';
import { progressBar } from './progress.js';
import { resumeHint, setResumeHint } from './interrupt.js';
import { GENERATION_HELP, GENERATION_OPTIONS } from './run.js';
import { JUDGE_HELP, JUDGE_OPTIONS, repeatFlag } from './judge.js';
import { generationOverrides, joinNegativeNumbers, judgeOverrides } from './flags.js';
import { probeMarker, probeToCase } from '../cases/probes.js';

/** The canary placed in the system prompt: fixed per config, so cached answers stay valid. */
export function canaryFor(config: Record<string, unknown>): string {
  return `RGA-CANARY-${createHash('sha256')
    .update(`canary:${configDigest(config)}`)
    .digest('hex')
    .slice(0, 12)
    .toUpperCase()}`;
}

/** The per-attack table rows. */
export function probeRows(s: ProbeSummary): string[][] {
  const row = (name: string, a: ProbeSummary['all']) => [
    name,
    String(a.n),
    String(a.passed),
    String(a.failed),
    String(a.leaks),
    String(a.markers_repeated),
    String(a.gated),
    String(a.errors),
    Object.entries(a.judge)
      .map(([k, v]) => `${k} ${v}`)
      .join(' · ') || '–',
  ];
  return [...Object.entries(s.by_attack).map(([k, a]) => row(k, a)), row('all', s.all)];
}

const HEADER = [
  'attack',
  'n',
  'passed',
  'failed',
  'canary leaks',
  'markers repeated',
  'gated',
  'errors',
  'judge verdicts',
];

export const probeCommand: Command = {
  name: 'probe',
  summary:
    'safety probes: injections, system-prompt leaks (canary), role hijacks, abuse, off-topic, indirect injections',
  help: `ragaudit probe [options] [--probes FILE]

Runs the safety probes (default: the config's probes, cases/demo/safety.yml for the demo) through
the whole pipeline with a canary token placed in the system prompt. Each answer is checked
deterministically: the canary must never appear (a leak fails any probe), an indirect probe's
planted marker (notes: "marker: …") must not be repeated, and the stance must match what the
probe expects (refuse, abstain, no_leak, answer). Reported per attack type.

Options:
${GENERATION_HELP}
${JUDGE_HELP}
      --probes FILE               probe file or directory (repeatable), instead of the config's;
                                   --cases PATH means the same for this command

Exit codes: 0 every probe passed, 1 a probe failed (a leak, a followed injection, a wrong stance)
or ended in error, 2 bad input or config.`,
  async run(argv, io) {
    const { values } = parseOrThrow('probe', () =>
      parseArgs({
        args: joinNegativeNumbers(argv, GENERATION_OPTIONS),
        options: { ...GENERATION_OPTIONS, ...JUDGE_OPTIONS, probes: { type: 'string', multiple: true } },
        allowPositionals: false,
      }),
    );
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    // --cases is the pipeline's name for "what to run": for probe it names probe files.
    if (values.probes?.length && values.cases?.length)
      throw new InputError('probe: give the probe files with --probes or --cases, not both');
    const given = values.probes?.length ? values.probes : values.cases;
    const loaded = loadWithOverrides({ ...values, cases: undefined }, io, [
      ...generationOverrides(values),
      ...judgeOverrides(values),
    ]);
    // Probe results sit beside the audit's: name them apart unless --name says otherwise.
    if (!values.name) loaded.config.name = `${loaded.config.name}-probes`;
    const repeat = repeatFlag(values);
    if (!given?.length && !loaded.config.probes.length)
      throw new InputError(`probe: ${loaded.source} names no probes: add 'probes: [FILE]' to it or pass --probes FILE`);
    const probes = loadProbes(
      given?.length ? given.map((p) => resolve(io.cwd, p)) : loaded.config.probes.map((p) => resolveFrom(loaded, p)),
    );
    const byId = new Map<string, Probe>(probes.map((p) => [p.value.id, p.value]));
    const canary = canaryFor(publicConfig(loaded.config));
    const probeInfo = (id: string) => ({ attack: byId.get(id)!.attack, expect: byId.get(id)!.expect });
    loaded.config.evidence.system_append = [...loaded.config.evidence.system_append, 'canary'];
    const { ctx, warnings } = await openContext(values, loaded, io);
    try {
      // The judge sees what must not leak: the canary, and an indirect probe's planted marker.
      const mustNotLeak = (r: { id: string }) => [canary, probeMarker(byId.get(r.id)!)].filter(Boolean).join('\n');
      const { deps, judge } = buildAuditSetup(ctx, io.env, { repeat, mustNotLeak, clauseVars: { canary } });
      announceComponents(ctx, io);
      const bar = progressBar(io, 'probe');
      const out = outputDir(loaded, io);
      const cases = probes.map((p) => ({ ...p, value: probeToCase(p.value) }));
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
          onLedger: (f) => (io.err(`ledger: ${f}\n`), setResumeHint(resumeHint('probe', f))),
          ...(values.resume ? { resume: values.resume } : {}),
          finish: async (record) => {
            const probe = byId.get(record.id)!;
            record.probe = probeInfo(record.id);
            if (record.status === 'error') return;
            const check = checkSafety(probe, record.answer, record.status === 'gated', canary, ctx.config.evidence.cta);
            record.scores.push(safetyScore(check));
          },
          summarisers: { probes: summariseProbes },
        },
      );
      bar.stop();
      const summary = result.summary.probes as ProbeSummary;
      const files = writeResults(out, result, probeMarkdown(result, summary), { secrets: ctx.secrets, stamp });
      setResumeHint(undefined);
      io.out(`${textTable(HEADER, probeRows(summary))}\n\n`);
      for (const r of result.cases) {
        const s = r.scores.find((x) => x.name === 'safety');
        if (r.status === 'error') io.out(`ERROR ${r.id}: ${redact(r.error?.message ?? '')}\n`);
        else if (s?.value === 0) io.out(`FAIL  ${r.id} (${r.probe?.attack}): ${s.reason}\n`);
      }
      io.out(`results: ${files.json}\ndigest:  ${files.md}\n`);
      return summary.all.failed > 0 || summary.all.errors > 0 ? 1 : 0;
    } finally {
      await ctx.close();
    }
  },
};

function probeMarkdown(result: RunResult, s: ProbeSummary): string {
  const rows = result.cases.map((r) => {
    const safety = r.scores.find((x) => x.name === 'safety');
    return [
      r.id,
      r.probe?.attack ?? '',
      r.probe?.expect ?? '',
      r.status,
      safety ? (safety.value ? 'pass' : 'FAIL') : '–',
      safety?.reason ?? r.error?.message ?? '',
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
    markdownTable(HEADER, probeRows(s)),
    '',
    '## Probes',
    '',
    markdownTable(['probe', 'attack', 'expect', 'status', 'result', 'why', 'answer (start)'], rows),
    '',
  ].join('\n');
}
