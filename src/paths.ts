import { isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root: src/paths.ts and dist/paths.js both sit one level below it. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The prompts shipped with the package. */
export const PROMPTS_DIR = join(PACKAGE_ROOT, 'prompts');

/** The demo forum shipped with the package. */
export const DEMO_FORUM_DIR = join(PACKAGE_ROOT, 'cases', 'demo', 'forum');

/** A path as shown and stored in outputs: relative to `cwd` when inside it, else absolute. */
export function displayPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}
