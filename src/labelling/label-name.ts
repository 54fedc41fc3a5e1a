import { userInfo } from 'node:os';
import { InputError } from '../errors.js';
import { LABELLER_PATTERN } from '../judge/label-file.js';

/**
 * The name the labelling page labels under until it is given another, so labelling can start at
 * once: `--labeller NAME`, else (loopback only: the page is used on this machine) the login name
 * made a labeller name (lowercase, `[a-z0-9_.-]`), else none (the page asks for one). A page served
 * to other machines (--allow-remote) asks each labeller, since the server's login is not theirs.
 */
export function defaultLabeller(given: string | undefined, remote: boolean): string {
  if (given !== undefined) {
    if (!LABELLER_PATTERN.test(given))
      throw new InputError(`--labeller ${given}: a short lowercase name (letters, digits, _ . -; at most 40)`);
    return given;
  }
  if (remote) return '';
  let login = '';
  try {
    login = userInfo().username;
  } catch {
    // No login name (a container without a passwd entry): the page asks.
  }
  const name = login
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 40);
  return LABELLER_PATTERN.test(name) ? name : '';
}
