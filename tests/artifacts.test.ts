/**
 * The one artifact writer (src/io/artifacts.ts): atomic, secret-scanned, schema-checked; and the
 * JSON outputs of compare, calibrate and calibrate --answer, each stamped with schema_version and kind.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { rememberSecrets } from '../src/errors.js';
import { tempPathFor, writeArtifact, writeArtifactStream, writeJsonArtifact } from '../src/io/artifacts.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { runCli } from './fixtures/audit/harness.js';

const fresh = () => mkdtempSync(join(tmpdir(), 'ragaudit-artifacts-'));

describe('the artifact writer', () => {
  it('writes through a temp file in the same directory and leaves only the target', () => {
    const dir = fresh();
    const file = join(dir, 'sub', 'a.md');
    expect(tempPathFor(file)).toBe(`${file}.${process.pid}.tmp`);
    expect(writeArtifact(file, '# one\n')).toBe(file);
    expect(readFileSync(file, 'utf8')).toBe('# one\n');
    expect(readdirSync(join(dir, 'sub'))).toEqual(['a.md']);
  });

  it('a failure mid-write leaves the previous file whole and no temp file', () => {
    const dir = fresh();
    const file = join(dir, 'r.json');
    writeFileSync(file, 'previous');
    const body = (write: (t: string) => void) => {
      write('{"half": ');
      // Larger than one buffered chunk, so part of the body has reached the temp file.
      write(`"${'x'.repeat((1 << 20) + 10)}"`);
      expect(existsSync(tempPathFor(file))).toBe(true);
      throw new Error('disk on fire');
    };
    expect(() => writeArtifactStream(file, body)).toThrow(`cannot write ${file}: disk on fire`);
    expect(readFileSync(file, 'utf8')).toBe('previous');
    expect(readdirSync(dir)).toEqual(['r.json']);
  });

  it('refuses text carrying a registered or a given secret, naming the path, and writes nothing', () => {
    const dir = fresh();
    rememberSecrets(['registered-secret-0451']);
    const a = join(dir, 'a.md');
    expect(() => writeArtifact(a, 'key: registered-secret-0451')).toThrow(
      `refusing to write ${a}: the output carries a configured secret`,
    );
    const b = join(dir, 'b.json');
    expect(() =>
      writeJsonArtifact(b, { schema_version: 1, kind: 't', note: 'given-secret-77' }, { secrets: ['given-secret-77'] }),
    ).toThrow(`refusing to write ${b}`);
    // A secret in a later piece of a streamed body: the earlier pieces are not kept either.
    const c = join(dir, 'c.json');
    expect(() =>
      writeArtifactStream(c, (w) => (w('{"ok": 1,'), w('"k": "given-secret-77"}')), { secrets: ['given-secret-77'] }),
    ).toThrow(`refusing to write ${c}`);
    // Values shorter than 6 characters are not secrets to scan for (as when registering).
    expect(() => writeArtifact(join(dir, 'd.md'), 'abc', { secrets: ['abc'] })).not.toThrow();
    expect(readdirSync(dir)).toEqual(['d.md']);
  });

  it('writes nothing when the document does not match its schema', () => {
    const dir = fresh();
    const schema = z.object({ schema_version: z.literal(1), kind: z.literal('t'), n: z.number() }).strict();
    const file = join(dir, 't.json');
    expect(() => writeJsonArtifact(file, { schema_version: 1, kind: 't', n: 'one' } as never, { schema })).toThrow(
      /^internal: .*t\.json: the t document does not match its schema: n: /,
    );
    expect(readdirSync(dir)).toEqual([]);
    writeJsonArtifact(file, { schema_version: 1 as const, kind: 't' as const, n: 1 }, { schema });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ schema_version: 1, kind: 't', n: 1 });
  });

  it('never replaces a file when alternatives are given', () => {
    const dir = fresh();
    const file = join(dir, 'x.json');
    const alt = (n: number) => join(dir, `x-${n}.json`);
    expect(writeArtifact(file, '1', { alternative: alt })).toBe(file);
    expect(writeArtifact(file, '2', { alternative: alt })).toBe(alt(2));
    expect(readFileSync(file, 'utf8')).toBe('1');
    expect(readdirSync(dir).sort()).toEqual(['x-2.json', 'x.json']);
  });
});

describe('every JSON output carries schema_version and kind', () => {
  const out = fresh();
  const cli = (argv: string[]) => runCli(argv, { cwd: PACKAGE_ROOT, env: {} });
  let results: string;
  beforeAll(async () => {
    expect((await cli(['run', '--out', out, '--no-report'])).code).toBe(0);
    results = join(
      out,
      readdirSync(out).find((f) => f.endsWith('-demo.json'))!,
    );
  });
  const json = (dir: string, suffix: string) => {
    const names = readdirSync(dir).filter((f) => f.endsWith(suffix));
    expect(names).toHaveLength(1);
    return JSON.parse(readFileSync(join(dir, names[0]!), 'utf8')) as Record<string, unknown>;
  };

  it('results', () => {
    expect(JSON.parse(readFileSync(results, 'utf8'))).toMatchObject({ schema_version: 1, kind: 'run' });
  });

  it('compare', async () => {
    const dir = join(out, 'compare');
    expect((await cli(['compare', results, results, '--out', dir])).code).toBe(0);
    const doc = json(dir, '-compare.json');
    expect(doc).toMatchObject({ schema_version: 1, kind: 'compare' });
    expect(Object.keys(doc).slice(0, 2)).toEqual(['schema_version', 'kind']);
  });

  it('calibrate', async () => {
    const dir = join(out, 'calibrate');
    expect((await cli(['calibrate', results, '--out', dir])).code).toBe(0);
    expect(json(dir, '-calibration.json')).toMatchObject({ schema_version: 1, kind: 'calibration' });
  });

  it('calibrate --answer', async () => {
    const dir = join(out, 'zone-ab');
    expect((await cli(['calibrate', results, '--answer', '--candidates=-5:1', '--out', dir])).code).toBe(0);
    expect(json(dir, '-zone-ab.json')).toMatchObject({ schema_version: 1, kind: 'zone-ab' });
  });
});
