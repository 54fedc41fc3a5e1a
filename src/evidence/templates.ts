import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { InputError } from '../errors.js';

/** A prompt from prompts/: its name, version (goes into cache keys and results) and text. */
export interface Prompt {
  name: string;
  version: string;
  text: string;
  file: string;
}

const cache = new Map<string, Prompt>();

/** Loads `prompts/<name>.md` (front matter `version:`), once per process. */
export function loadPrompt(dir: string, name: string): Prompt {
  const file = join(dir, `${name}.md`);
  const hit = cache.get(file);
  if (hit) return hit;
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch {
    throw new InputError(`${file}: prompt '${name}' not found`);
  }
  const m = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(raw);
  const meta = m ? (parseYaml(m[1]!) as { version?: unknown } | null) : null;
  if (!m || meta?.version === undefined)
    throw new InputError(`${file}:1: prompt must start with front matter holding 'version:'`);
  const prompt = { name, version: String(meta.version), text: m[2]!.trim(), file };
  cache.set(file, prompt);
  return prompt;
}

/** The placeholders a prompt uses: `{{name}}`. */
export function placeholders(text: string): string[] {
  return [...new Set([...text.matchAll(/\{\{([a-z_][a-z0-9_]*)\}\}/g)].map((m) => m[1]!))];
}

/**
 * Fills `{{name}}` placeholders. A missing or an unused variable is an error: a prompt and its
 * caller must agree exactly. Values are inserted once, never re-scanned for placeholders.
 */
export function render(prompt: Pick<Prompt, 'text' | 'file'>, vars: Record<string, string>): string {
  const used = placeholders(prompt.text);
  const missing = used.filter((u) => !(u in vars));
  const unused = Object.keys(vars).filter((k) => !used.includes(k));
  if (missing.length || unused.length) {
    throw new InputError(
      `${prompt.file}: ${[missing.length ? `missing value for ${missing.map((x) => `{{${x}}}`).join(', ')}` : '', unused.length ? `unused value ${unused.join(', ')}` : ''].filter(Boolean).join('; ')}`,
    );
  }
  return prompt.text.replace(/\{\{([a-z_][a-z0-9_]*)\}\}/g, (_m, k: string) => vars[k]!);
}
