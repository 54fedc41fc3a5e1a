import type { RunResult } from '../model/results.js';

/** One configuration difference between a run and the baseline: "the factor that changed". */
export interface ConfigDiff {
  /** Dotted path, e.g. `zones.weak_below`, `retrieval.channels.posts.title_gate`, `run.kind`. */
  path: string;
  /** undefined: absent on that side. */
  old: unknown;
  new: unknown;
}

/**
 * Keys that label a run rather than configure it: they differ between any two runs (the name
 * given with --name, where files go) and are not factors.
 */
export const LABEL_KEYS: readonly string[] = ['name', 'note', 'output_dir', 'cache_dir'];

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An array whose items are objects with distinct string `name`s is keyed by name (channels, fusions). */
function namedItems(v: unknown[]): Map<string, unknown> | null {
  if (!v.length || !v.every((x) => isObj(x) && typeof x.name === 'string')) return null;
  const m = new Map(v.map((x) => [(x as { name: string }).name, x] as const));
  return m.size === v.length ? m : null;
}

/** Flattens a config to `path → leaf`; arrays of primitives stay whole (a list is one value). */
export function flatten(value: unknown, prefix = '', out = new Map<string, unknown>()): Map<string, unknown> {
  const join = (k: string) => (prefix ? `${prefix}.${k}` : k);
  if (isObj(value)) {
    const keys = Object.keys(value);
    if (!keys.length && prefix) out.set(prefix, {});
    for (const k of keys) flatten(value[k], join(k), out);
  } else if (Array.isArray(value)) {
    const named = namedItems(value);
    if (named) for (const [k, x] of named) flatten(x, join(k), out);
    else if (value.some((x) => isObj(x) || Array.isArray(x)))
      value.forEach((x, i) => flatten(x, `${prefix}[${i}]`, out));
    else out.set(prefix, value);
  } else out.set(prefix, value);
  return out;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** What a run's comparison looks at: its config without label keys, plus the run's kind and database. */
function comparable(result: RunResult): Map<string, unknown> {
  const config = Object.fromEntries(Object.entries(result.config).filter(([k]) => !LABEL_KEYS.includes(k)));
  const flat = flatten(config);
  flat.set('run.kind', result.kind);
  flat.set('run.database', result.database);
  return flat;
}

/** Every configuration difference of `run` against `baseline`, sorted by path. */
export function configDiff(baseline: RunResult, run: RunResult): ConfigDiff[] {
  const a = comparable(baseline);
  const b = comparable(run);
  const paths = [...new Set([...a.keys(), ...b.keys()])].sort();
  return paths.filter((p) => !same(a.get(p), b.get(p))).map((p) => ({ path: p, old: a.get(p), new: b.get(p) }));
}

/** A config value as shown: numbers and strings bare, lists and objects as JSON, absent as `(absent)`. */
export function showValue(v: unknown): string {
  if (v === undefined) return '(absent)';
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

/** `zones.weak_below: 0 → 1`. */
export function showDiff(d: ConfigDiff): string {
  return `${d.path}: ${showValue(d.old)} → ${showValue(d.new)}`;
}
