/**
 * The test prerequisites take pgvector's source from the Debian archive apt is configured with
 * (scripts/pgvector-source.mjs), never from a host written in the repository: the archives come
 * from apt's own reading of its sources (one-line and deb822 files), here a configuration of the
 * test's own (APT_CONFIG) whose archive is a local server.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../src/paths.js';

const SCRIPT = join(PACKAGE_ROOT, 'scripts', 'pgvector-source.mjs');
const dir = mkdtempSync(join(tmpdir(), 'ragaudit-prereq-'));

/** An apt configuration reading only these sources: a one-line sources.list and deb822 parts. */
function aptConfig(name: string, list: string, parts: Record<string, string> = {}): string {
  const root = join(dir, name);
  mkdirSync(join(root, 'parts'), { recursive: true });
  writeFileSync(join(root, 'sources.list'), list);
  for (const [file, text] of Object.entries(parts)) writeFileSync(join(root, 'parts', file), text);
  const conf = join(root, 'apt.conf');
  writeFileSync(conf, `Dir::Etc::sourcelist "${root}/sources.list";\nDir::Etc::sourceparts "${root}/parts";\n`);
  return conf;
}

/** The script run as the prerequisites step runs it (a child, so this process's server can answer). */
function script(args: string[], aptConf: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SCRIPT, ...args], { env: { ...process.env, APT_CONFIG: aptConf } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

describe('pgvector source for the test prerequisites', () => {
  const servers: Server[] = [];
  afterAll(() => servers.forEach((s) => s.close()));

  /** A local archive serving `files` (paths under /debian); every request is recorded. */
  async function archive(files: Record<string, Buffer>): Promise<{ uri: string; asked: string[] }> {
    const asked: string[] = [];
    const server = createServer((req, res) => {
      asked.push(req.url ?? '');
      const body = files[req.url ?? ''];
      res.writeHead(body ? 200 : 404).end(body);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { uri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/debian`, asked };
  }

  it("lists the archives of apt's sources, one-line and deb822, main only, each once", async () => {
    const conf = aptConfig(
      'mirrors',
      [
        'deb http://one.example/debian bookworm main',
        'deb http://one.example/debian bookworm-updates main',
        'deb http://contrib.example/debian bookworm contrib',
        '',
      ].join('\n'),
      {
        'two.sources':
          'Types: deb deb-src\nURIs: https://two.example/debian/\nSuites: trixie\nComponents: main contrib\n',
      },
    );
    const r = await script(['--mirrors'], conf);
    expect(r.err).toBe('');
    expect(r.out).toBe('http://one.example/debian\nhttps://two.example/debian\n');
  });

  it("takes the version a Sources index lists when the pool's pinned file fails its checksum", async () => {
    const tarball = Buffer.from('pgvector 0.8.1 source, as this test serves it');
    const sources = [
      'Package: pgvector-other\nVersion: 1\n',
      `Package: pgvector\nVersion: 0.8.1-1\nChecksums-Sha256:\n ${sha256('dsc')} 3 pgvector_0.8.1-1.dsc\n ${sha256(tarball)} ${tarball.length} pgvector_0.8.1.orig.tar.gz\n`,
    ].join('\n');
    const xz = spawnSync('xz', ['-c'], { input: sources });
    const { uri, asked } = await archive({
      // Served under the pinned name, but not the pinned bytes: refused.
      '/debian/pool/main/p/pgvector/pgvector_0.8.0.orig.tar.gz': Buffer.from('something else'),
      '/debian/dists/testing/main/source/Sources.xz': xz.stdout,
      '/debian/pool/main/p/pgvector/pgvector_0.8.1.orig.tar.gz': tarball,
    });
    const out = mkdtempSync(join(dir, 'out-'));
    const r = await script([out], aptConfig('local', `deb ${uri} trixie main\n`));
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(readFileSync(join(out, 'pgvector_0.8.1.orig.tar.gz'))).toEqual(tarball);
    expect(asked).toEqual([
      '/debian/pool/main/p/pgvector/pgvector_0.8.0.orig.tar.gz',
      '/debian/dists/stable/main/source/Sources.xz',
      '/debian/dists/testing/main/source/Sources.xz',
      '/debian/pool/main/p/pgvector/pgvector_0.8.1.orig.tar.gz',
    ]);
  });

  it('a tarball that matches no checksum is refused, every attempt named', async () => {
    const { uri } = await archive({ '/debian/pool/main/p/pgvector/pgvector_0.8.0.orig.tar.gz': Buffer.from('x') });
    const r = await script([mkdtempSync(join(dir, 'none-'))], aptConfig('bad', `deb ${uri} trixie main\n`));
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      `pgvector-source: no pgvector source could be fetched: ${uri}/pool/main/p/pgvector/pgvector_0.8.0.orig.tar.gz: checksum mismatch; ${uri}/dists/stable/main/source/Sources.xz: HTTP 404; ${uri}/dists/testing/main/source/Sources.xz: HTTP 404\n`,
    );
  });
});

describe('the repository names no package-archive host', () => {
  it('in code, docs or comments (the archive is the one apt is configured with)', () => {
    // Hosts under Debian's and Ubuntu's domains, and PostgreSQL's apt repository.
    const host = /\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:debian\.org|ubuntu\.com)\b|\bapt\.postgresql\.org\b/i;
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: PACKAGE_ROOT, encoding: 'utf8' })
      .split('\0')
      .filter((f) => f && !/\.(png|jpe?g|gif|ico|gz|xz|zip)$/i.test(f));
    const named = files.flatMap((f) => {
      const text = readFileSync(join(PACKAGE_ROOT, f), 'utf8');
      return text
        .split('\n')
        .flatMap((line, i) => (host.test(line) ? [`${f}:${i + 1}: ${line.trim().slice(0, 120)}`] : []));
    });
    expect(named).toEqual([]);
  });
});
