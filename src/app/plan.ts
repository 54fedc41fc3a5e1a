/**
 * The dry runs of `run`, `probe` and `judge` (`--dry-run`): the plan of what the command would
 * send, built without asking any generator, judge, embedder or reranker (src/runs/plan-run.ts).
 * Nothing is written: no results, no ledger, no cache entry.
 */
import { planCases, planRejudge } from '../runs/plan-run.js';
import type { RunPlan } from '../wiring/plan-pricing.js';
import type { AppHooks } from './hooks.js';
import { rejudgeSetupOptions, type RejudgeInputs } from './judge.js';
import { selectCases, type PipelineInputs } from './pipeline.js';
import { probeCases, type ProbeInputs } from './probe.js';

/** `run --dry-run`: the plan of the run over its cases (the shard's, with --shard). */
export function planRun(inputs: PipelineInputs & { repeat: number }, hooks: AppHooks): Promise<RunPlan> {
  const { cases } = selectCases(inputs, hooks);
  return planCases({
    loaded: inputs.loaded,
    cases,
    dbUrl: inputs.db ?? inputs.env.DATABASE_URL,
    env: inputs.env,
    cwd: inputs.cwd,
    command: 'run',
    repeat: inputs.repeat,
    onProgress: (text) => hooks.event({ kind: 'status', text }),
  });
}

/** `probe --dry-run`: the plan of the probe run (the canary clause in the prompts, as the run has it). */
export function planProbes(inputs: Omit<ProbeInputs, 'resume'>, hooks: AppHooks): Promise<RunPlan> {
  const { probeInfo, mustNotLeak, canary, cases } = probeCases(inputs);
  return planCases({
    loaded: inputs.loaded,
    cases,
    dbUrl: inputs.db ?? inputs.env.DATABASE_URL,
    env: inputs.env,
    cwd: inputs.cwd,
    command: 'probe',
    repeat: inputs.repeat,
    probe: { clauseVars: { canary }, mustNotLeak, info: probeInfo },
    onProgress: (text) => hooks.event({ kind: 'status', text }),
  });
}

/** `judge RESULTS --dry-run`: the plan of re-judging the stored answers. */
export function planJudge(inputs: RejudgeInputs): Promise<RunPlan> {
  return planRejudge(inputs.stored, inputs.config, rejudgeSetupOptions(inputs));
}
