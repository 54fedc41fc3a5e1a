#!/usr/bin/env node
/**
 * pgvector's source tarball for the test prerequisites, from the Debian archive this machine's apt
 * is configured with: the archive URIs come from `apt-get indextargets`, which reads the one-line
 * (`sources.list`) and the deb822 (`*.sources`) files as apt does, so the repository names no
 * archive host. The pinned version is taken when a mirror still holds it (SHA-256 checked, from
 * Debian's Sources index); otherwise the version a suite's Sources index lists now, with that
 * index's checksum.
 *
 *   node scripts/pgvector-source.mjs --mirrors   prints the archives it would ask, in order
 *   node scripts/pgvector-source.mjs DIR         fetches and checks the tarball into DIR
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Debian's pgvector source tarball, and its SHA-256 from Debian's Sources index. */
export const PGVECTOR = {
  version: '0.8.0',
  sha256: '867a2c328d4928a5a9d6f052cd3bc78c7d60228a9b914ad32aa3db88e9de27b0',
};

/** Suites whose Sources index is read when the pinned tarball has left the pool. */
const SUITES = ['stable', 'testing'];

/**
 * The http(s) archives of apt's configured sources that have a `main` component, in apt's order,
 * each once (without its trailing slash). Binary and source entries alike: both name the archive
 * whose pool holds the source package.
 */
export function aptMirrors() {
  const r = spawnSync('apt-get', ['indextargets', '--no-release-info', '--format', '$(REPO_URI) $(COMPONENT)'], {
    encoding: 'utf8',
  });
  if (r.error || r.status !== 0)
    throw new Error(
      `cannot list apt's sources ('apt-get indextargets': ${r.error ? r.error.message : `exit ${r.status}: ${r.stderr.trim()}`})`,
    );
  const uris = r.stdout
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([uri, component]) => component === 'main' && /^https?:\/\//.test(uri ?? ''))
    .map(([uri]) => uri.replace(/\/+$/, ''));
  return [...new Set(uris)];
}

async function download(url) {
  const res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

const sha256Of = (body) => createHash('sha256').update(body).digest('hex');

/**
 * The source tarball (`{ file, body }`) from the first of `mirrors` that has the pinned one, else
 * the version a suite's Sources index lists, checked against that index's SHA-256.
 */
export async function pgvectorSource(mirrors = aptMirrors()) {
  if (mirrors.length === 0)
    throw new Error(
      'apt names no http(s) archive with a main component (see /etc/apt/sources.list and /etc/apt/sources.list.d/)',
    );
  const tried = [];
  const fetchChecked = async (mirror, file, sha256) => {
    const url = `${mirror}/pool/main/p/pgvector/${file}`;
    try {
      const body = await download(url);
      if (sha256Of(body) === sha256) return { file, body };
      tried.push(`${url}: checksum mismatch`);
    } catch (e) {
      tried.push(e.message);
    }
    return undefined;
  };
  const pinnedFile = `pgvector_${PGVECTOR.version}.orig.tar.gz`;
  for (const mirror of mirrors) {
    const pinned = await fetchChecked(mirror, pinnedFile, PGVECTOR.sha256);
    if (pinned) return pinned;
  }
  for (const mirror of mirrors)
    for (const suite of SUITES) {
      const where = `${mirror}/dists/${suite}/main/source/Sources.xz`;
      try {
        const xz = spawnSync('xz', ['-dc'], { input: await download(where), maxBuffer: 1 << 30 });
        if (xz.status !== 0) throw new Error('cannot decompress it (is xz-utils installed?)');
        const entry = xz.stdout
          .toString('utf8')
          .split('\n\n')
          .find((p) => p.startsWith('Package: pgvector\n'));
        const m =
          entry &&
          /^ ([0-9a-f]{64}) \d+ (pgvector_[^ ]+\.orig\.tar\.gz)$/m.exec(entry.split('Checksums-Sha256:')[1] ?? '');
        if (!m) {
          tried.push(`${where} lists no pgvector source tarball`);
          continue;
        }
        const listed = await fetchChecked(mirror, m[2], m[1]);
        if (listed) return listed;
      } catch (e) {
        tried.push(e.message.startsWith(where) ? e.message : `${where}: ${e.message}`);
      }
    }
  throw new Error(`no pgvector source could be fetched: ${tried.join('; ')}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const arg = process.argv[2];
  try {
    if (arg === '--mirrors')
      process.stdout.write(
        aptMirrors()
          .map((m) => `${m}\n`)
          .join(''),
      );
    else if (arg && !arg.startsWith('-')) {
      const { file, body } = await pgvectorSource();
      writeFileSync(join(arg, file), body);
      process.stdout.write(`${join(arg, file)} sha256 ${sha256Of(body)}\n`);
    } else {
      process.stderr.write('usage: node scripts/pgvector-source.mjs --mirrors | DIR\n');
      process.exit(2);
    }
  } catch (e) {
    process.stderr.write(`pgvector-source: ${e.message}\n`);
    process.exit(1);
  }
}
