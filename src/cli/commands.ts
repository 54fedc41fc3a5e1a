import type { Command } from './command.js';

/**
 * A command as the CLI lists it. Its module (options, help and work, and everything the work
 * imports) is loaded only when the command runs: `ragaudit run` loads what a run needs, not the
 * modules of the other commands (~0.1 s of every start-up).
 */
export interface CommandEntry {
  name: string;
  summary: string;
  load(): Promise<Command>;
}

/** Every command, in the order `ragaudit --help` lists them. */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'run',
    summary: 'the full audit: retrieval, rerank, zones, evidence, generation, citations, judge',
    load: async () => (await import('./run.js')).runCommand,
  },
  {
    name: 'score',
    summary: 'score answers recorded elsewhere (ANSWERS.jsonl: id, answer, sources) as a --target run does',
    load: async () => (await import('./score.js')).scoreCommand,
  },
  {
    name: 'retrieval',
    summary: 'replay retrieval by channel, fusion and rerank; per-node Hit@k, MRR, content MRR@10 (no LLM)',
    load: async () => (await import('./retrieval.js')).retrievalCommand,
  },
  {
    name: 'probe',
    summary:
      'safety probes: injections, system-prompt leaks (canary), role hijacks, abuse, off-topic, indirect injections',
    load: async () => (await import('./probe.js')).probeCommand,
  },
  {
    name: 'trec',
    summary: 'evaluate a TREC run against qrels, exactly as trec_eval does',
    load: async () => (await import('./trec.js')).trecCommand,
  },
  {
    name: 'calibrate',
    summary: 'top-1 score distributions by case kind, a threshold grid and a recommended (abstain, weak) pair',
    load: async () => (await import('./calibrate.js')).calibrateCommand,
  },
  {
    name: 'matrix',
    summary: 'run several configs on the same cases (e.g. configs/A–G) and print their comparison table',
    load: async () => (await import('./matrix.js')).matrixCommand,
  },
  {
    name: 'judge',
    summary: 're-judge the answers of a stored run (no generator call) and report judge agreement',
    load: async () => (await import('./judge.js')).judgeCommand,
  },
  {
    name: 'pool',
    summary: 'pool the top-k candidates of several runs per question, minus the judged, for labelling',
    load: async () => (await import('./pool.js')).poolCommand,
  },
  {
    name: 'label',
    summary: 'label answers (blind to the judge) and pooled retrieval candidates in a local web page',
    load: async () => (await import('./label.js')).labelCommand,
  },
  {
    name: 'goldens',
    summary: 'widen the cases’ goldens with the pool candidates people judged relevant',
    load: async () => (await import('./goldens.js')).goldensCommand,
  },
  {
    name: 'mine',
    summary:
      'write a question set from the database: stratified public topics, rephrased questions, ambiguous goldens flagged',
    load: async () => (await import('./mine.js')).mineCommand,
  },
  {
    name: 'agreement',
    summary: 'agreement of the judge and the labellers (kappa, per class, intervals); the judge calibration',
    load: async () => (await import('./agreement.js')).agreementCommand,
  },
  {
    name: 'compare',
    summary: 'compare runs one factor at a time: table, config differences, per-question changes, CIs, gate',
    load: async () => (await import('./compare.js')).compareCommand,
  },
  {
    name: 'gate',
    summary: 'gate one run: rules on its figures, interval bounds and pass rate (a baseline optional), JUnit',
    load: async () => (await import('./gate.js')).gateCommand,
  },
  {
    name: 'report',
    summary: 'write a self-contained HTML report of a results file',
    load: async () => (await import('./report.js')).reportCommand,
  },
  {
    name: 'view',
    summary: 'a local page over a results folder: every run, its report, two runs side by side, failures first',
    load: async () => (await import('./view.js')).viewCommand,
  },
  {
    name: 'merge',
    summary: "join the results of a run's shards (--shard I/N) into the results of the whole run",
    load: async () => (await import('./merge.js')).mergeCommand,
  },
  {
    name: 'doctor',
    summary: 'check a database against a config, in plain sentences: tables, search, pgvector, coverage, goldens, role',
    load: async () => (await import('./doctor.js')).doctorCommand,
  },
  {
    name: 'init',
    summary: 'write a starting config for a Discourse database: the channels that can work there, commented',
    load: async () => (await import('./init.js')).initCommand,
  },
  {
    name: 'embed',
    summary: 'compute post and topic vectors for an embedding model or strategy into a side database',
    load: async () => (await import('./embed.js')).embedCommand,
  },
];
