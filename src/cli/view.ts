import { startViewServer } from '../app/view.js';
import { InputError } from '../errors.js';
import { numberFlag, type Command } from './command.js';
import { onInterrupt } from './interrupt.js';
import { HELP_OPTION, optionsHelp, parseCommand, type OptionSpecs } from './options.js';

const OPTIONS = {
  host: {
    type: 'string',
    value: 'ADDR',
    doc: 'loopback address to bind: 127.0.0.1, ::1 or localhost',
    default: '127.0.0.1',
  },
  port: { type: 'string', value: 'N', doc: 'port (default 0: any free port)' },
  ...HELP_OPTION,
} as const satisfies OptionSpecs;

const HELP = `ragaudit view [DIR] [--port N]

Serves a page over a results folder (default results/, sub-folders included) on this machine and
prints its URL, with a random token every request must carry. The page lists every run: date,
name, file, kind, config digest, cases, errors, Hit@5, MRR@10, real links, faithfulness and the
verdict (pass rate, failed cases); a file that is not a run or cannot be read is listed with the
reason. Open a run to see its HTML report (made on demand, as 'ragaudit report' makes it); pick
two to compare them question by question, answers, sources and verdicts side by side, failures
first, with the configuration difference and the paired statistics. Keyboard: j/k or arrows
move, Enter opens, x or Space picks, c compares the two picked (the keys are on the page). Each
page prints the 'ragaudit label' command for the same runs. The server only reads; it binds
loopback only, checks the Host and Origin of every request and sends a Content-Security-Policy.

Options:
${optionsHelp(OPTIONS)}

Exit codes: 130 stopped (Ctrl-C), 2 bad input.`;

export const viewCommand: Command = {
  name: 'view',
  options: OPTIONS,
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseCommand('view', argv, OPTIONS, { positionals: true });
    if (values.help) {
      io.out(`${HELP}\n`);
      return 0;
    }
    if (positionals.length > 1)
      throw new InputError(`view: expected one folder, got ${positionals.length} (see 'ragaudit view --help')`);
    const port = numberFlag('port', values.port) ?? 0;
    if (!(Number.isInteger(port) && port >= 0 && port < 65536))
      throw new InputError(`--port: expected a port number, got ${values.port}`);
    const server = await startViewServer({
      dir: positionals[0] ?? 'results',
      host: values.host ?? '127.0.0.1',
      port,
      cwd: io.cwd,
    });
    io.out(
      `runs:  ${server.counts.runs} in ${server.dir}${server.counts.other ? ` (and ${server.counts.other} other files)` : ''}\nopen:  ${server.url}\n(Ctrl-C stops the server)\n`,
    );
    await new Promise<void>((done) => {
      onInterrupt(() => void server.close().then(done));
    });
    return 130;
  },
};
