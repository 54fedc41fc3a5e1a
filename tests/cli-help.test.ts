/**
 * Each command's options are declared once (src/cli/options.ts and the command's file) and both
 * the parser and the `--help` text come from that declaration: every declared option is listed
 * in the help, every option the help lists is declared and read by the parser, and the lines
 * keep one column per block.
 */
import { DEFAULT_WIDTH, foldText } from '../src/cli/width.js';
import { describe, expect, it } from 'vitest';
import type { CliIO } from '../src/cli/command.js';
import { COMMANDS } from '../src/cli/commands.js';
import { main } from '../src/cli/main.js';
import { optionsHelp } from '../src/cli/options.js';
import { PACKAGE_ROOT } from '../src/paths.js';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIO = {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    isTTY: false,
    cwd: PACKAGE_ROOT,
    // COLUMNS unset and not a terminal: the help is folded at the default width.
    env: { COLUMNS: undefined },
  };
  const code = await main(args, io);
  return { code, out, err };
}

/** An option line of a help: `  -c, --config FILE …` or `      --db URL …` (continuation lines are indented further). */
const OPTION_LINE = /^(?: {2}-([A-Za-z]), | {6})--([a-z][a-z0-9-]*)(?= |$)/;

function documented(help: string): { name: string; short?: string }[] {
  return help.split('\n').flatMap((line) => {
    const m = OPTION_LINE.exec(line);
    return m ? [{ name: m[2]!, ...(m[1] ? { short: m[1] } : {}) }] : [];
  });
}

describe('--help is generated from the declared options', () => {
  it('each listed command loads the command of its name', async () => {
    for (const entry of COMMANDS) expect((await entry.load()).name).toBe(entry.name);
  });

  for (const entry of COMMANDS) {
    it(`${entry.name}: the help lists exactly the declared options, each once, with its short name`, async () => {
      const command = await entry.load();
      const r = await cli([command.name, '--help']);
      expect(r.code).toBe(0);
      // Shown folded to the console (120 columns when not a terminal): src/cli/width.ts.
      const help = foldText(command.help, DEFAULT_WIDTH);
      expect(r.out).toBe(command.name === 'trec' ? help : `${help}\n`);
      const listed = documented(r.out);
      const declared = Object.keys(command.options);
      expect(listed.map((o) => o.name).sort()).toEqual([...declared].sort());
      expect(new Set(listed.map((o) => o.name)).size).toBe(listed.length);
      for (const o of listed) expect(o.short).toBe(command.options[o.name]!.short);
    });

    it(`${entry.name}: every option the help lists is read by the parser`, async () => {
      const command = await entry.load();
      for (const { name } of documented(command.help)) {
        const spec = command.options[name]!;
        const args = spec.type === 'string' ? [`--${name}`, 'x'] : [`--${name}`];
        // --help wins once parsing succeeded: an option the parser does not know fails first (exit 2).
        const r = await cli([command.name, ...args, '--help']);
        expect({ name, code: r.code, err: r.err }).toEqual({ name, code: 0, err: '' });
      }
    });
  }

  it('an undeclared option is refused, so the help cannot list an option nobody reads', async () => {
    const r = await cli(['run', '--not-an-option', '--help']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/run: Unknown option '--not-an-option'/);
  });

  it('aligns descriptions in one column; continuation lines and the default follow the text', () => {
    const text = optionsHelp(
      {
        config: { type: 'string', short: 'c', value: 'FILE', doc: 'the config' },
        bin: { type: 'string', value: 'W', doc: 'bin width\nsecond line', default: 0.5 },
        help: { type: 'boolean', short: 'h', doc: 'this help' },
      },
      undefined,
    );
    expect(text).toBe(
      [
        '  -c, --config FILE  the config',
        '      --bin W        bin width',
        '                     second line (default 0.5)',
        '  -h, --help         this help',
      ].join('\n'),
    );
  });
});
