import type { ConfigOverride } from '../config/load.js';
import { ConfigSchema, type Config } from '../config/schema.js';
import { ConfigError, InputError } from '../errors.js';
import { zoneThresholdProblems, type ZoneThresholds } from '../model/zones.js';
import { RERANK_PROVIDERS } from '../providers/rerankers.js';
import { parseModelSpec } from '../wiring/providers.js';
import { numberFlag } from './command.js';

/**
 * Command-line flags as config overrides: each flag becomes a value in the config as written,
 * so the schema and the cross-field rules judge it (no hand-kept copy of an enum here), and a
 * problem names the flag.
 */

/**
 * `--abstain-below -5` as people type it: node's parseArgs reads a value starting with '-' as
 * a missing value, so a negative number after a string option is joined to it (`--x=-5`).
 */
export function joinNegativeNumbers(
  argv: readonly string[],
  options: Readonly<Record<string, { type: 'string' | 'boolean'; short?: string }>>,
): string[] {
  const takesValue = new Set<string>();
  for (const [name, o] of Object.entries(options)) {
    if (o.type !== 'string') continue;
    takesValue.add(`--${name}`);
    if (o.short) takesValue.add(`-${o.short}`);
  }
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = argv[i + 1];
    if (takesValue.has(a) && next !== undefined && /^-(\d|\.\d)/.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

function isOfflineReranker(provider: string): boolean {
  return Object.entries(RERANK_PROVIDERS).some(([name, p]) => name === provider && p.offline);
}

/** `PROVIDER:MODEL`, or a bare `offline` for the default offline stand-in. */
export function modelFlag(flag: string, spec: string, offlineModel: string): { provider: string; model: string } {
  if (spec === 'offline') return { provider: 'offline', model: offlineModel };
  return parseModelSpec(flag, spec);
}

/** The options every pipeline command shares. */
export interface PipelineFlags {
  db?: string;
  name?: string;
  out?: string;
  language?: string;
  query?: string;
}

export function pipelineOverrides(v: PipelineFlags): ConfigOverride[] {
  const o: ConfigOverride[] = [];
  if (v.name !== undefined) o.push({ path: ['name'], flag: `--name ${v.name}`, value: v.name });
  if (v.out !== undefined) o.push({ path: ['output_dir'], flag: `--out ${v.out}`, value: v.out });
  if (v.language !== undefined) o.push({ path: ['language'], flag: `--language ${v.language}`, value: v.language });
  if (v.query !== undefined) o.push({ path: ['conversation', 'query'], flag: `--query ${v.query}`, value: v.query });
  // --db replaces the config's database, `${DATABASE_URL}` included (which then need not be set).
  if (v.db !== undefined) o.push({ path: ['database', 'url'], flag: '--db', value: v.db });
  return o;
}

export interface GenerationFlags {
  generator?: string;
  reranker?: string;
  'abstain-below'?: string;
  'weak-below'?: string;
  'system-append'?: string[];
  concurrency?: string;
  batch?: boolean;
  target?: string;
}

export function generationOverrides(v: GenerationFlags): ConfigOverride[] {
  const o: ConfigOverride[] = [];
  if (v.generator !== undefined) {
    const { provider, model } = modelFlag('generator', v.generator, 'extractive');
    const flag = `--generator ${v.generator}`;
    o.push(
      { path: ['generator', 'provider'], flag, value: provider },
      { path: ['generator', 'model'], flag, value: model },
    );
  }
  if (v.reranker !== undefined) {
    const { provider, model: target } = modelFlag('reranker', v.reranker, 'lexical');
    const flag = `--reranker ${v.reranker}`;
    // A reranker needs the rest of its section (which node it reranks) from the config.
    o.push(
      { path: ['rerank', 'provider'], flag, value: provider, createParents: false },
      // An offline stand-in takes a model name after the colon, a server its URL (the registry says which).
      { path: ['rerank', isOfflineReranker(provider) ? 'model' : 'url'], flag, value: target, createParents: false },
    );
  }
  const a = numberFlag('abstain-below', v['abstain-below']);
  const w = numberFlag('weak-below', v['weak-below']);
  if (a !== undefined) o.push({ path: ['zones', 'abstain_below'], flag: `--abstain-below ${a}`, value: a });
  if (w !== undefined) o.push({ path: ['zones', 'weak_below'], flag: `--weak-below ${w}`, value: w });
  const append = v['system-append'];
  if (append?.length)
    o.push({
      path: ['evidence', 'system_append'],
      flag: `--system-append ${append.join(' ')}`,
      value: (written: unknown) => [...(Array.isArray(written) ? written : []), ...append],
    });
  const n = numberFlag('concurrency', v.concurrency);
  if (n !== undefined) o.push({ path: ['generator', 'concurrency'], flag: `--concurrency ${v.concurrency}`, value: n });
  if (v.batch) o.push({ path: ['batch', 'enabled'], flag: '--batch', value: true });
  if (v.target !== undefined) o.push({ path: ['target', 'url'], flag: `--target ${v.target}`, value: v.target });
  return o;
}

export interface JudgeFlags {
  judge?: string;
  'no-judge'?: boolean;
}

export function judgeOverrides(v: JudgeFlags): ConfigOverride[] {
  if (v.judge && v['no-judge']) throw new InputError('--judge and --no-judge cannot be given together');
  if (v['no-judge']) return [{ path: ['judge', 'provider'], flag: '--no-judge', value: 'none' }];
  if (v.judge === undefined) return [];
  const { provider, model } = modelFlag('judge', v.judge, 'heuristic');
  const flag = `--judge ${v.judge}`;
  return [
    { path: ['judge', 'provider'], flag, value: provider },
    { path: ['judge', 'model'], flag, value: model },
  ];
}

/** --repeat or --judge-repeat, one name for the same count (default 1). */
export function repeatFlag(v: { repeat?: string | undefined; 'judge-repeat'?: string | undefined }): number {
  if (v.repeat !== undefined && v['judge-repeat'] !== undefined && v.repeat !== v['judge-repeat'])
    throw new InputError(`--repeat ${v.repeat} and --judge-repeat ${v['judge-repeat']} disagree: give one`);
  const name = v.repeat === undefined && v['judge-repeat'] !== undefined ? 'judge-repeat' : 'repeat';
  const raw = v.repeat ?? v['judge-repeat'];
  const k = numberFlag(name, raw) ?? 1;
  if (!Number.isInteger(k) || k < 1) throw new InputError(`--${name}: expected a positive integer, got ${raw}`);
  return k;
}

/** Applies --judge / --no-judge to a stored run's config, checked by the config schema; returns --repeat. */
export function applyJudgeFlags(
  config: Config,
  v: JudgeFlags & { repeat?: string | undefined; 'judge-repeat'?: string | undefined },
): number {
  const overrides = judgeOverrides(v);
  if (overrides.length) {
    const parsed = ConfigSchema.shape.judge.safeParse({
      ...config.judge,
      ...Object.fromEntries(overrides.map((o) => [o.path[1]!, o.value])),
    });
    if (!parsed.success)
      throw new ConfigError(
        `invalid judge flags`,
        parsed.error.issues.map((i) => `${overrides[0]!.flag}: judge.${i.path.join('.')}: ${i.message}`),
      );
    config.judge = parsed.data;
  }
  return repeatFlag(v);
}

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
