import { basename, join, resolve } from 'node:path';
import { readForum } from '../demo/forum.js';
import { InputError } from '../errors.js';
import { writeJsonArtifact } from '../io/artifacts.js';
import { fileDigest } from '../judge/label-file.js';
import { DEMO_FORUM_DIR, displayPath } from '../paths.js';
import { timestamp } from '../store/results-file.js';
import { poolQuestions, PoolFileSchema, type Passage, type PoolFile } from './pooling.js';
import { checkOutputDir, checkOutputFile } from '../app/output-paths.js';
import { fillFromDatabase } from './pool-texts.js';
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

const clip = (text: string) => (text.length > PASSAGE_CHARS ? `${text.slice(0, PASSAGE_CHARS)}…` : text);

function forumPassages(dir: string): (postId: number) => Passage | undefined {
  const forum = readForum(dir);
  const byId = new Map<number, Passage>();
  for (const t of forum.topics)
    for (const p of t.posts) byId.set(p.id, { title: t.title, text: clip(p.raw.trim()), url: null });
  return (id) => byId.get(id);
}

/** The runs read and pooled, before anything is written (the output directory checked first). */
function poolOf(inputs: PoolInputs) {
  if (!(Number.isInteger(inputs.k) && inputs.k > 0))
    throw new InputError(`--k: expected a positive integer, got ${inputs.k}`);
  const dir = resolve(inputs.cwd, inputs.outDir);
  checkOutputDir(dir, '--out');
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
  return { dir, files, results, labels, questions };
}

function writePool(inputs: PoolInputs, p: ReturnType<typeof poolOf>): { pool: PoolFile; file: string } {
  const pool: PoolFile = PoolFileSchema.parse({
    schema_version: 1,
    kind: 'pool',
    created_at: (inputs.now ?? new Date()).toISOString(),
    k: inputs.k,
    runs: p.results.map((r, i) => ({
      file: displayPath(p.files[i]!, inputs.cwd),
      digest: fileDigest(p.files[i]!),
      name: p.labels[i]!,
      nodes: r.nodes.map((n) => n.name),
    })),
    questions: p.questions,
  });
  const file = join(p.dir, `${timestamp()}-pool.json`);
  checkOutputFile(file, '--out', p.files);
  writeJsonArtifact(file, pool, { trailingNewline: true });
  return { pool, file };
}

/** `pool`: the pooled candidates of every question over the runs, written as a pool file (texts from the runs and the forum directory). */
export function runPool(inputs: PoolInputs): { pool: PoolFile; file: string } {
  return writePool(inputs, poolOf(inputs));
}

/** {@link runPool}, the candidates still without text read from the forum's database (`inputs.db`). */
export async function runPoolReadingTexts(
  inputs: PoolInputs & { db: string },
): Promise<{ pool: PoolFile; file: string }> {
  const p = poolOf(inputs);
  await fillFromDatabase(p.questions, inputs.db, clip);
  return writePool(inputs, p);
}
