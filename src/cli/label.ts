import { startLabelServer } from '../labelling/label-server.js';
import { InputError } from '../errors.js';
import { displayPath } from '../paths.js';
import { numberFlag, type Command } from './command.js';
import { onInterrupt, setResumeHint } from './interrupt.js';
import { HELP_OPTION, optionsHelp, parseCommand, type OptionSpecs } from './options.js';

const OPTIONS = {
  pool: { type: 'string', value: 'FILE', doc: 'a pool file (ragaudit pool): adds the Retrieval pool queue' },
  labels: {
    type: 'string',
    value: 'DIR',
    doc: "where the labels go, one <labeller>.jsonl each (default: labels/ beside the run's first case file)",
  },
  host: {
    type: 'string',
    value: 'ADDR',
    doc: 'address to bind: loopback only unless --allow-remote',
    default: '127.0.0.1',
  },
  port: { type: 'string', value: 'N', doc: 'port (default 0: any free port)' },
  labeller: {
    type: 'string',
    value: 'NAME',
    doc: 'label under this name until the page is given another (default: your login name; with --allow-remote none: each labeller types theirs)',
  },
  'allow-remote': {
    type: 'boolean',
    doc: 'allow a non-loopback --host (the token in the URL is then the only protection)',
  },
  ...HELP_OPTION,
} as const satisfies OptionSpecs;

const HELP = `ragaudit label [RESULTS.json…] [--pool POOL.json] [options]

Serves the labelling page on this machine and prints its URL (with a random token every request
must carry). Two queues:
  - Answers (from the results files), blind: the question, the sources as the model saw them, the
    answer with its [[n]] citations linked to their source; faithful yes/no/unsure, stance
    answered/hedged/abstained, whether each cited source supports what cites it, a note. The
    judge's verdict stays hidden until you have labelled the answer.
  - Retrieval pool (from --pool): each pooled passage with its thread title; relevant, partly or not.
Keyboard first (the keys are on the page), progress shown, each labeller by name with their own
shuffled order; every label is appended and fsynced to <labels>/<labeller>.jsonl at once, so
stopping the server (Ctrl-C) loses nothing and running it again resumes. A label that cannot be
written (a full disk) is not saved: the page says so and the item stays open. Figures: ragaudit
agreement (docs/labelling.md).

Options:
${optionsHelp(OPTIONS)}

Exit codes: 130 stopped (labels kept), 2 bad input.`;

export const labelCommand: Command = {
  name: 'label',
  options: OPTIONS,
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseCommand('label', argv, OPTIONS, { positionals: true });
    if (values.help) {
      io.out(`${HELP}\n`);
      return 0;
    }
    const port = numberFlag('port', values.port) ?? 0;
    if (!(Number.isInteger(port) && port >= 0 && port < 65536))
      throw new InputError(`--port: expected a port number, got ${values.port}`);
    const server = await startLabelServer({
      results: positionals,
      pool: values.pool,
      labels: values.labels,
      host: values.host ?? '127.0.0.1',
      port,
      allowRemote: Boolean(values['allow-remote']),
      labeller: values.labeller,
      cwd: io.cwd,
      warn: (m) => io.err(`warning: ${m}\n`),
    });
    const where = displayPath(server.labelsDir, io.cwd);
    setResumeHint(`labels are saved in ${where}; run the same command to go on where you stopped`);
    io.out(
      `answers: ${server.counts.answers} · pool candidates: ${server.counts.pool}\nlabels:  ${where}\nopen:    ${server.url}\n(Ctrl-C stops the server; every saved label is kept)\n`,
    );
    await new Promise<void>((done) => {
      onInterrupt(() => void server.close().then(done));
    });
    return 130;
  },
};
