import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { displayPath } from '../paths.js';
import type { RunResult } from '../model/results.js';
import { defaultNode, runFigures } from '../reports/compare-metrics.js';
import type { ViewRun } from '../reports/view-page.js';
import { openRunResults } from './results-input.js';

/**
 * The runs of a results folder as `view` lists them: every `.json` file under it (sub-folders
 * included, so `results/reference` shows under `results/`), read through the results reader from
 * its header and summary only (a large run's cases are not read to list it). A file that is not a
 * run or cannot be read is listed with the reader's message, never left out. Each file is read
 * again only when its size or time changes.
 */

/** Folders deeper than this are not searched (a results folder is shallow; a mistaken DIR is not). */
const MAX_DEPTH = 4;

/** A path as one shell word (the printed `label` command must work when pasted). */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A stable id of a file in the folder: the page's links name files by it, never by path. */
const idOf = (rel: string) => createHash('sha256').update(rel).digest('hex').slice(0, 12);

function jsonFiles(dir: string, depth = 0): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    if (e.name.startsWith('.') || e.name === 'node_modules') return [];
    const p = join(dir, e.name);
    if (e.isDirectory()) return depth < MAX_DEPTH ? jsonFiles(p, depth + 1) : [];
    return e.isFile() && e.name.toLowerCase().endsWith('.json') ? [p] : [];
  });
}

/** The figures a line of the list shows, from the header and summary alone. */
function listed(file: string, rel: string, cwd: string): ViewRun {
  const path = displayPath(file, cwd);
  const base = { id: idOf(rel), file, path, arg: shellWord(path) };
  try {
    const opened = openRunResults(file, 'view');
    const result: RunResult = { ...opened.header, summary: opened.summary, cases: [] };
    const node = defaultNode(result);
    const f = node ? runFigures(result, node) : null;
    const v = opened.summary.verdicts;
    return {
      ...base,
      ok: true,
      created_at: opened.header.created_at,
      name: opened.header.name,
      kind: opened.header.kind,
      note: opened.header.note,
      config_digest: opened.header.config_digest,
      offline: Object.values(opened.header.components).some((c) => c.offline),
      cases: opened.count,
      errors: opened.summary.retrieval.errors,
      node,
      hit_at_5: f?.hit_at_5.n ? f.hit_at_5.mean : null,
      mrr_at_10: f?.mrr_at_10.n ? f.mrr_at_10.mean : null,
      citation_validity: f?.citation_validity?.n ? f.citation_validity.mean : null,
      faithfulness: f?.faithfulness?.n ? f.faithfulness.mean : null,
      verdicts: v ? { passed: v.passed, failed: v.failed, pass_rate: v.pass_rate } : null,
    };
  } catch (e) {
    const message = (e as Error).message;
    // The row shows the path already: the message without it.
    const error = message.startsWith(file) ? message.slice(file.length).replace(/^[:\s]+/, '') : message;
    // Another file ragaudit writes (compare, calibration) is named as such by the reader: not broken.
    const other = /^is (.*), not a results file:/.exec(error);
    return other ? { ...base, ok: false, other: true, error: other[1]! } : { ...base, ok: false, other: false, error };
  }
}

/** Lists a results folder, newest run first, unreadable files after the runs; `cache` spares re-reading. */
export class RunFolder {
  private readonly cache = new Map<string, { stamp: string; run: ViewRun }>();
  constructor(
    readonly dir: string,
    private readonly cwd: string,
  ) {}

  list(): ViewRun[] {
    const out = jsonFiles(this.dir).map((file) => {
      const rel = relative(this.dir, file).split(sep).join('/');
      let stamp = '';
      try {
        const s = statSync(file);
        stamp = `${s.size}:${s.mtimeMs}`;
      } catch {
        // Gone since the listing: read (and fail) below.
      }
      const hit = this.cache.get(file);
      if (hit && hit.stamp === stamp) return hit.run;
      const run = listed(file, rel, this.cwd);
      this.cache.set(file, { stamp, run });
      return run;
    });
    return out.sort((a, b) =>
      a.ok && b.ok
        ? b.created_at.localeCompare(a.created_at) || a.path.localeCompare(b.path)
        : a.ok
          ? -1
          : b.ok
            ? 1
            : a.path.localeCompare(b.path),
    );
  }

  /** The listed run of an id (the list read again, so a new file is found). */
  find(id: string): ViewRun | undefined {
    return this.list().find((r) => r.id === id);
  }
}
