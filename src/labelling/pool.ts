import { basename, join, resolve } from 'node:path';
import { readForum } from '../demo/forum.js';
import { InputError } from '../errors.js';
import { writeJsonArtifact } from '../io/artifacts.js';
import { fileDigest } from '../judge/label-file.js';
import { DEMO_FORUM_DIR, displayPath } from '../paths.js';
import { timestamp } from '../store/results-file.js';
import { poolQuestions, PoolFileSchema, type Passage, type PoolFile } from './pooling.js';
import { checkOutputDir, checkOutputFile } from '../app/output-paths.js';
import { readRunResults } from '../app/results-input.js';

export interface PoolInputs {
  files: readonly string[];
  /** Depth of every list pooled. */
  k: number;
  /**
   * A forum directory (the demo's format) to read candidates' text from when no run showed them
   * as sources; default: the demo forum when every run was made on the embedded demo.
   */
  forum?: string | undefined;
  outDir: string;
  cwd: string;
  now?: Date;
}

/** How much of a post a person reads in the pool. */
const PASSAGE_CHARS = 1500;

function forumPassages(dir: string): (postId: number) => Passage | undefined {
  const forum = readForum(dir);
  const byId = new Map<number, Passage>();
  for (const t of forum.topics)
    for (const p of t.posts) {
      const text = p.raw.trim();
      byId.set(p.id, {
        title: t.title,
        text: text.length > PASSAGE_CHARS ? `${text.slice(0, PASSAGE_CHARS)}…` : text,
        url: null,
      });
    }
  return (id) => byId.get(id);
}

/** `pool`: the pooled candidates of every question over the runs, written as a pool file. */
export function runPool(inputs: PoolInputs): { pool: PoolFile; file: string } {
  if (!(Number.isInteger(inputs.k) && inputs.k > 0))
    throw new InputError(`--k: expected a positive integer, got ${inputs.k}`);
  const files = inputs.files.map((f) => resolve(inputs.cwd, f));
  const results = files.map((f) => readRunResults(f, 'pool'));
  const names = results.map((r, i) => r.name || basename(files[i]!));
  const labels = names.map((n, i) => (names.filter((x) => x === n).length > 1 ? `${n}#${i + 1}` : n));
  const demo = results.every((r) => /embedded demo/i.test(r.database));
  const forumDir = inputs.forum ? resolve(inputs.cwd, inputs.forum) : demo ? DEMO_FORUM_DIR : undefined;
  const passage = forumDir ? forumPassages(forumDir) : () => undefined;
  const questions = poolQuestions(
    results.map((result, i) => ({ label: labels[i]!, result })),
    inputs.k,
    passage,
  );
  const pool: PoolFile = PoolFileSchema.parse({
    schema_version: 1,
    kind: 'pool',
    created_at: (inputs.now ?? new Date()).toISOString(),
    k: inputs.k,
    runs: results.map((r, i) => ({
      file: displayPath(files[i]!, inputs.cwd),
      digest: fileDigest(files[i]!),
      name: labels[i]!,
      nodes: r.nodes.map((n) => n.name),
    })),
    questions,
  });
  const dir = resolve(inputs.cwd, inputs.outDir);
  checkOutputDir(dir, '--out');
  const file = join(dir, `${timestamp()}-pool.json`);
  checkOutputFile(file, '--out', files);
  writeJsonArtifact(file, pool, { trailingNewline: true });
  return { pool, file };
}
