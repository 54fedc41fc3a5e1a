import { runPool, runPoolReadingTexts } from '../labelling/pool.js';
import { InputError } from '../errors.js';
import { displayPath } from '../paths.js';
import { textTable } from '../reports/format.js';
import { numberFlag, type Command } from './command.js';
import { HELP_OPTION, optionsHelp, parseCommand, type OptionSpecs } from './options.js';

const OPTIONS = {
  k: { type: 'string', value: 'K', doc: 'depth of every list pooled', default: 10 },
  forum: {
    type: 'string',
    value: 'DIR',
    doc: `forum directory (the demo's format) to read candidates' text from when no run showed
them as sources (default: the demo forum for runs on the embedded demo)`,
  },
  db: {
    type: 'string',
    value: 'URL',
    doc: `the forum's database, to read the text of candidates no run showed and no --forum has
(read-only; default: DATABASE_URL, unless --forum is given)`,
  },
  out: { type: 'string', value: 'DIR', doc: "where <stamp>-pool.json goes (default 'results')" },
  ...HELP_OPTION,
} as const satisfies OptionSpecs;

const HELP = `ragaudit pool RESULTS.json… [options]

TREC-style pooling to widen the goldens: for each question, the union of the top K of every
retrieval node of every given run (configurations A–G, models…), minus what the case's goldens
already judge (its expected posts, and its expected topics when only topic lists found them).
Writes <stamp>-pool.json: per question the candidates with their thread title, text (from the
runs' sources, else --forum, else the forum's database: --db or DATABASE_URL), and which
run/node@rank found them; prints the pool size per question. Label the candidates with
'ragaudit label --pool POOL.json' and write the accepted ones back with 'ragaudit goldens'
(docs/labelling.md).

Options:
${optionsHelp(OPTIONS)}

Exit codes: 0 written, 2 bad input.`;

export const poolCommand: Command = {
  name: 'pool',
  options: OPTIONS,
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseCommand('pool', argv, OPTIONS, { positionals: true });
    if (values.help) {
      io.out(`${HELP}\n`);
      return 0;
    }
    if (!positionals.length)
      throw new InputError("pool: expected one or more results files (see 'ragaudit pool --help')");
    const inputs = {
      files: positionals,
      k: numberFlag('k', values.k) ?? 10,
      forum: values.forum,
      outDir: values.out ?? 'results',
      cwd: io.cwd,
    };
    const db = values.db ?? (values.forum ? undefined : io.env.DATABASE_URL);
    const { pool, file } = db ? await runPoolReadingTexts({ ...inputs, db }) : runPool(inputs);
    const rows = pool.questions.map((q) => [
      q.case_id,
      String(q.pooled),
      String(q.judged),
      String(q.candidates.length),
    ]);
    const total = pool.questions.reduce((a, q) => a + q.candidates.length, 0);
    io.out(`${textTable(['question', 'pooled', 'already judged', 'to label'], rows)}\n`);
    io.out(
      `${pool.questions.length} questions, ${pool.runs.length} runs, top ${pool.k}: ${total} candidates to label\npool: ${displayPath(file, io.cwd)}\n`,
    );
    return 0;
  },
};
