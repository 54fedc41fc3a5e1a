import { main } from '../../src/cli/main.js';

/** The CLI run in process from `cwd`, with what it printed on each stream and its exit code. */
export async function runCli(
  cwd: string,
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(args, {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    isTTY: false,
    cwd,
    env,
  });
  return { code, out, err };
}
