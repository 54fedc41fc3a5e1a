import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { dirname, relative, resolve, sep, isAbsolute } from 'node:path';
import { InputError } from '../errors.js';

/**
 * Output paths are checked before any work: a directory that cannot be written, a pseudo
 * file system (mkdir -p under /proc spins forever in Node), a path that is an input of the same
 * command — each is exit 2 at once with the path named, never a lost run or a clobbered input.
 */

/** Kernel file systems where nothing a report writes can live. */
const PSEUDO_ROOTS = ['/proc', '/sys', '/dev'];

function nearestExisting(path: string): { path: string; isDir: boolean } {
  let p = path;
  for (;;) {
    try {
      return { path: p, isDir: statSync(p).isDirectory() };
    } catch {
      const up = dirname(p);
      if (up === p) return { path: p, isDir: true };
      p = up;
    }
  }
}

function onPseudoFs(path: string): boolean {
  let real = path;
  try {
    real = realpathSync(path);
  } catch {
    // A path that does not resolve is judged as written.
  }
  return PSEUDO_ROOTS.some((r) => real === r || real.startsWith(`${r}/`));
}

/**
 * Checks that `dir` can hold files (its nearest existing ancestor is a writable directory on a
 * real file system); the writers create it. `what` names the flag or setting.
 */
export function checkOutputDir(dir: string, what: string): void {
  const existing = nearestExisting(dir);
  if (!existing.isDir) throw new InputError(`${what}: ${dir}: ${existing.path} is not a directory`);
  if (onPseudoFs(existing.path))
    throw new InputError(`${what}: ${dir}: cannot write under ${existing.path} (a kernel file system)`);
  try {
    accessSync(existing.path, constants.W_OK | constants.X_OK);
  } catch {
    throw new InputError(`${what}: ${dir}: ${existing.path} is not writable`);
  }
}

const same = (a: string, b: string): boolean => {
  if (resolve(a) === resolve(b)) return true;
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
};

/**
 * Checks an output file: not one of `inputs`, not a directory or special file, in a directory
 * that can be written.
 */
export function checkOutputFile(file: string, what: string, inputs: readonly string[] = []): void {
  const input = inputs.find((i) => same(i, file));
  if (input)
    throw new InputError(`${what}: ${file} is an input of this command: it would be overwritten (choose another path)`);
  let st;
  try {
    st = statSync(file);
  } catch {
    st = undefined;
  }
  if (st && !st.isFile()) throw new InputError(`${what}: ${file} is not a regular file`);
  if (onPseudoFs(file)) throw new InputError(`${what}: ${file}: cannot write on a kernel file system`);
  checkOutputDir(dirname(file), what);
  if (st) {
    try {
      accessSync(file, constants.W_OK);
    } catch {
      throw new InputError(`${what}: ${file} is not writable`);
    }
  }
}

/** True when `file` lies inside `dir` (after resolving `..`): run names never write elsewhere. */
export function isInside(dir: string, file: string): boolean {
  const rel = relative(resolve(dir), resolve(file));
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
}
