import { runDoctor } from '../doctor/doctor.js';
import type { Mark } from '../doctor/diagnose.js';
import { inertText as inert } from '../reports/inert.js';
import { capLines } from '../reports/list-cap.js';
import type { Command } from './command.js';
import { cliHooks, resolvePaths } from './common.js';
import { loadConfig } from '../config/load.js';
import { resolve } from 'node:path';
import { pipelineOverrides } from './flags.js';
import { optionsHelp, parseCommand, PIPELINE_COLUMN, type OptionSpecs } from './options.js';

const OPTIONS = {
  config: { type: 'string', short: 'c', value: 'FILE', doc: 'ragaudit config (YAML); default: the built-in demo' },
  db: {
    type: 'string',
    value: 'URL',
    doc: "the database to check (postgres://…); default: DATABASE_URL, else the config's",
  },
  cases: {
    type: 'string',
    multiple: true,
    value: 'PATH',
    doc: "cases whose golden ids must be public (repeatable); default: the config's",
  },
  strict: { type: 'boolean', doc: 'exit 1 when a check warns (default: only failures fail)' },
  json: { type: 'boolean', doc: 'print the checks as JSON (for scripts) instead of sentences' },
  verbose: { type: 'boolean', short: 'v', doc: 'stack traces on errors' },
  help: { type: 'boolean', short: 'h', doc: 'this help' },
} as const satisfies OptionSpecs;

const MARKS: Record<Mark, string> = { pass: 'PASS', warn: 'WARN', fail: 'FAIL' };

export const doctorCommand: Command = {
  name: 'doctor',
  options: OPTIONS,
  help: `ragaudit doctor [options]

Connects to the database the config (or --db) names and checks, one sentence each with PASS,
WARN or FAIL: the server version; the Discourse tables and columns the channels read; the
text-search configuration; pgvector and its version; discourse-ai's embedding tables, their
vector type, each (model_id, strategy_id) pair with its dimensions and share of public posts or
topics, against the configured embedder; public topics and posts against all (the visibility
rule named); every golden id of the cases public; one timed sample query per channel; and
whether the role could write (use a read-only role). Every statement is a read.

Without --config, a database given by --db or DATABASE_URL is checked with the channels
'ragaudit init' would write for it (its keyword tables and discourse-ai pairs), not the demo's;
goldens are checked only for the cases given with --cases.

Options:
${optionsHelp(OPTIONS, PIPELINE_COLUMN)}

Exit codes: 0 every check passed (warnings allowed), 1 a warning with --strict,
2 a failed check, a bad config or a database that cannot be reached.`,
  async run(argv, io) {
    const { values } = parseCommand('doctor', argv, OPTIONS, { positionals: false });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    const loaded = loadConfig(
      values.config ? resolve(io.cwd, values.config) : undefined,
      io.env,
      pipelineOverrides(values),
    );
    // A database without a config: judge that forum, not the demo's channels and cases.
    const forum = !values.config && Boolean(values.db ?? io.env.DATABASE_URL);
    const report = await runDoctor(
      { loaded, db: values.db, cases: resolvePaths(io, values.cases), cwd: io.cwd, env: io.env, forum },
      cliHooks(io),
    );
    if (values.json) io.out(`${JSON.stringify({ kind: 'doctor', schema_version: 1, ...report }, null, 2)}\n`);
    else {
      io.out(`ragaudit doctor: ${inert(report.database)}\n${report.note ? `${report.note}\n` : ''}\n`);
      for (const c of report.checks) {
        io.out(`${MARKS[c.mark]}  ${inert(c.sentence)}\n`);
        // A long list (every case with a golden that is not public) ends with where the whole is.
        for (const d of capLines(c.details ?? [], inert, "'ragaudit doctor --json'")) io.out(`        ${d}\n`);
      }
      const n = (m: Mark) => report.checks.filter((c) => c.mark === m).length;
      io.out(`\n${n('pass')} passed · ${n('warn')} warning${n('warn') === 1 ? '' : 's'} · ${n('fail')} failed\n`);
    }
    return report.worst === 'fail' ? 2 : report.worst === 'warn' && values.strict ? 1 : 0;
  },
};
