import { existsSync, readdirSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { ConfigError, InputError } from '../errors.js';
import { formatPath, readYaml, zodProblems, type YamlSource } from '../yaml-file.js';
import { PACKAGE_ROOT, PROMPTS_DIR } from '../paths.js';
import { LANGUAGES, languagePack } from '../model/languages/index.js';
import { zoneThresholdProblems } from '../model/zones.js';
import { RERANK_PROVIDERS } from '../providers/rerankers.js';
import { ConfigSchema, type Config } from './schema.js';
import { DEFAULT_CONFIG } from './defaults.js';

/** A validated config, its source, and the directory its relative paths resolve against. */
export interface LoadedConfig {
  config: Config;
  /** The config file, or `(built-in demo)`. */
  source: string;
  baseDir: string;
}

/**
 * `${VAR}` and `${VAR:-default}` in string values are replaced from the environment; a variable
 * that is unset and has no default is a problem reported with its line.
 */
function interpolate(value: unknown, env: NodeJS.ProcessEnv, path: PropertyKey[], missing: PropertyKey[][]): unknown {
  if (typeof value === 'string') {
    let unset = false;
    const out = value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_m, v: string, def?: string) => {
      const got = env[v];
      if (got !== undefined && got !== '') return got;
      if (def !== undefined) return def;
      unset = true;
      return '';
    });
    if (unset) {
      missing.push(path);
      return undefined;
    }
    return out;
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, env, [...path, i], missing));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const r = interpolate(v, env, [...path, k], missing);
      if (r !== undefined) out[k] = r;
    }
    return out;
  }
  return value;
}

/** A cross-field problem: reported at `path`; `related` are the other fields it depends on (a flag that set one is named). */
export interface FieldProblem {
  path: PropertyKey[];
  message: string;
  related?: PropertyKey[][];
}

/** Cross-field rules, each `path: message`. */
export function crossFieldProblems(c: Config): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const p of zoneThresholdProblems(c.zones))
    problems.push({ path: ['zones', ...p.path], message: p.message, related: p.related.map((r) => ['zones', ...r]) });
  const known = new Set<string>();
  c.retrieval.channels.forEach((ch, i) => {
    if (known.has(ch.name))
      problems.push({ path: ['retrieval', 'channels', i, 'name'], message: `duplicate node name '${ch.name}'` });
    known.add(ch.name);
    for (const n of Array.isArray(ch.max_posts_count) ? ch.max_posts_count : []) known.add(`${ch.name}_${n}`);
    if (ch.title_gate && ch.grain !== 'topic')
      problems.push({
        path: ['retrieval', 'channels', i, 'title_gate'],
        message: 'the title gate applies to topic-grain channels only',
      });
    if (ch.max_posts_count !== undefined && ch.grain !== 'topic')
      problems.push({
        path: ['retrieval', 'channels', i, 'max_posts_count'],
        message: 'size routing applies to topic-grain channels only',
      });
  });
  c.retrieval.fusions.forEach((f, i) => {
    f.inputs.forEach((input, j) => {
      if (!known.has(input))
        problems.push({
          path: ['retrieval', 'fusions', i, 'inputs', j],
          message: `unknown node '${input}' (fusions may use channels and earlier fusions)`,
        });
    });
    if (known.has(f.name))
      problems.push({ path: ['retrieval', 'fusions', i, 'name'], message: `duplicate node name '${f.name}'` });
    known.add(f.name);
  });
  if (c.rerank) {
    if (!known.has(c.rerank.node))
      problems.push({ path: ['rerank', 'node'], message: `unknown node '${c.rerank.node}'` });
    if (known.has(c.rerank.name))
      problems.push({ path: ['rerank', 'name'], message: `duplicate node name '${c.rerank.name}'` });
    if (!RERANK_PROVIDERS[c.rerank.provider].offline && !c.rerank.url)
      problems.push({ path: ['rerank', 'url'], message: `required for provider '${c.rerank.provider}'` });
    known.add(c.rerank.name);
  }
  if (c.evidence.node && !known.has(c.evidence.node))
    problems.push({ path: ['evidence', 'node'], message: `unknown node '${c.evidence.node}'` });
  return problems;
}

/**
 * A value a command-line flag puts into the config as written, before validation, so the schema
 * and the cross-field rules check flags exactly as they check the file. `value` may compute the
 * new value from the one written (e.g. to append to a list).
 */
export interface ConfigOverride {
  path: readonly string[];
  /** How the user gave it, for messages: `--name`. */
  flag: string;
  value: unknown | ((written: unknown) => unknown);
  /** false: the section must already be in the config (default true: created when absent). */
  createParents?: boolean;
}

const isPrefix = (prefix: readonly PropertyKey[], path: readonly PropertyKey[]) =>
  prefix.length <= path.length && prefix.every((k, i) => path[i] === k);

function applyOverrides(data: unknown, overrides: readonly ConfigOverride[]): unknown {
  const root: Record<string, unknown> =
    data && typeof data === 'object' && !Array.isArray(data) ? structuredClone(data as Record<string, unknown>) : {};
  for (const o of overrides) {
    let node = root;
    for (const key of o.path.slice(0, -1)) {
      const next = node[key];
      if (!next || typeof next !== 'object' || Array.isArray(next)) {
        if (o.createParents === false)
          throw new ConfigError(`${o.flag}: the config has no ${key} section to apply it to`);
        node[key] = {};
      }
      node = node[key] as Record<string, unknown>;
    }
    const last = o.path[o.path.length - 1]!;
    node[last] = typeof o.value === 'function' ? (o.value as (w: unknown) => unknown)(node[last]) : o.value;
  }
  return root;
}

/** A section of the written config as an object to extend, or undefined when it is not one (the schema then says why). */
function section(root: Record<string, unknown>, key: string): Record<string, unknown> | undefined {
  const v = root[key];
  if (v === undefined) return {};
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/**
 * A config in another language than English searches with that language's text-search
 * configuration and ends its answers with that language's CTA unless database.text_search_config
 * or evidence.cta names one (an explicit value always wins).
 */
function languageDefaults(data: unknown): unknown {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return data;
  let root = data as Record<string, unknown>;
  const pack = Object.entries(LANGUAGES).find(([code]) => code === root.language)?.[1];
  if (!pack) return data;
  const db = section(root, 'database');
  if (db && db.text_search_config === undefined)
    root = { ...root, database: { ...db, text_search_config: pack.textSearchConfig } };
  const evidence = section(root, 'evidence');
  if (evidence && evidence.cta === undefined) root = { ...root, evidence: { ...evidence, cta: pack.cta } };
  return root;
}

/** Clauses named in evidence.system_append that prompts/clauses/ does not hold. */
function clauseProblems(c: Config): FieldProblem[] {
  const dir = join(PROMPTS_DIR, languagePack(c.language).promptsDir, 'clauses');
  const missing = c.evidence.system_append
    .map((n, i) => ({ n, i }))
    .filter(({ n }) => !/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(n) || !existsSync(join(dir, `${n}.md`)));
  if (!missing.length) return [];
  const known = readdirSync(dir)
    .filter((f) => f.endsWith('.md'))
    .map((f) => f.slice(0, -3))
    .sort();
  return missing.map(({ n, i }) => ({
    path: ['evidence', 'system_append', i],
    message: `no clause '${n}' in prompts/clauses (available: ${known.join(', ') || 'none'})`,
  }));
}

/**
 * Parses, normalises and checks a config object; every problem at once. Overrides (command-line
 * flags) are applied to the interpolated config before the schema runs; a problem in a value a
 * flag gave names the flag, and a `${VAR}` the flag replaced need not be set.
 */
export function validateConfig(
  data: unknown,
  src: YamlSource | null,
  env: NodeJS.ProcessEnv,
  overrides: readonly ConfigOverride[] = [],
): Config {
  const missing: PropertyKey[][] = [];
  const interpolated = applyOverrides(interpolate(data ?? {}, env, [], missing), overrides);
  const flagOf = (path: readonly PropertyKey[]) => [...overrides].reverse().find((o) => isPrefix(o.path, path))?.flag;
  const where = (path: readonly PropertyKey[]) =>
    flagOf(path) ?? (src ? `${src.file}:${src.lineOf(path)}` : '(built-in config)');
  const problems = missing
    .filter((p) => !flagOf(p))
    .map((p) => `${where(p)}: ${p.join('.')}: environment variable is not set`);
  const parsed = ConfigSchema.safeParse(languageDefaults(interpolated));
  const title = `invalid config${src ? ` ${src.file}` : ''}`;
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const flag = flagOf(issue.path);
      if (flag) problems.push(`${flag}: ${formatPath(issue.path)}: ${issue.message}`);
      else if (src) problems.push(...zodProblems(src, { issues: [issue] }));
      else problems.push(`(built-in config): ${issue.path.join('.')}: ${issue.message}`);
    }
    throw new ConfigError(title, problems);
  }
  for (const p of [...crossFieldProblems(parsed.data), ...clauseProblems(parsed.data)]) {
    const flag = flagOf(p.path) ?? (p.related ?? []).map(flagOf).find(Boolean);
    problems.push(`${flag ?? where(p.path)}: ${p.path.join('.')}: ${p.message}`);
  }
  if (problems.length) throw new ConfigError(title, problems);
  return parsed.data;
}

/**
 * Loads a config file, or the built-in demo config when `file` is undefined, with command-line
 * overrides applied before validation.
 */
export function loadConfig(
  file: string | undefined,
  env: NodeJS.ProcessEnv,
  overrides: readonly ConfigOverride[] = [],
): LoadedConfig {
  if (!file)
    return {
      config: validateConfig(DEFAULT_CONFIG, null, env, overrides),
      source: '(built-in demo)',
      baseDir: PACKAGE_ROOT,
    };
  let src: YamlSource;
  try {
    src = readYaml(file);
  } catch (e) {
    if (e instanceof InputError) throw new ConfigError(e.message, e.problems);
    throw e;
  }
  return { config: validateConfig(src.data, src, env, overrides), source: file, baseDir: dirname(resolve(file)) };
}

/** Resolves a path from the config against the config's directory. */
export function resolveFrom(loaded: LoadedConfig, p: string): string {
  return isAbsolute(p) ? p : resolve(loaded.baseDir, p);
}
