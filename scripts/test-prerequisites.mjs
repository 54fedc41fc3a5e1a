#!/usr/bin/env node
/**
 * What `npm test` needs beyond npm, checked before the tests start (the `pretest` step):
 *   - PostgreSQL's server binaries: the shared SqlClient suite starts a throwaway server;
 *   - Chromium (RAGAUDIT_CHROMIUM, default /usr/bin/chromium): the HTML report and JUnit XML
 *     are checked in a real browser;
 *   - pgvector in that server: the semantic channels and the database checks run against a real
 *     PostgreSQL with the extension, as production has it. Debian 12 packages no pgvector, so it is
 *     built from Debian's own source package, fetched from the archive apt is configured with
 *     (scripts/pgvector-source.mjs: checksum pinned, or the version a suite's Sources index lists
 *     when the pinned one has left the pool), against postgresql-server-dev-<version>, and
 *     installed with `make install`.
 * When something is missing and we are root on Debian/Ubuntu, it is installed with apt-get;
 * otherwise the exact command to run is printed and the tests do not start (exit 1), so a fresh
 * machine never reports skipped or failed suites for a missing tool.
 */
import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pgvectorSource } from './pgvector-source.mjs';

const CHROMIUM = process.env.RAGAUDIT_CHROMIUM || '/usr/bin/chromium';

function executable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function hasPostgres() {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return false;
  return readdirSync(root).some((v) => executable(`${root}/${v}/bin/initdb`));
}

function missing() {
  const out = [];
  if (!executable(CHROMIUM))
    out.push({ what: `Chromium at ${CHROMIUM}`, pkg: 'chromium', custom: Boolean(process.env.RAGAUDIT_CHROMIUM) });
  if (!hasPostgres())
    out.push({
      what: 'PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb)',
      pkg: 'postgresql',
      custom: false,
    });
  return out;
}

function postgresVersions() {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return [];
  return readdirSync(root).filter((v) => executable(`${root}/${v}/bin/initdb`));
}

function hasPgvector(version) {
  return existsSync(`/usr/share/postgresql/${version}/extension/vector.control`);
}

/** Builds and installs pgvector for each PostgreSQL version that lacks it (root only). */
async function ensurePgvector() {
  const versions = postgresVersions().filter((v) => !hasPgvector(v));
  if (versions.length === 0) return;
  if (process.getuid?.() !== 0 || !executable('/usr/bin/apt-get')) {
    process.stderr.write(
      [
        `npm test: pgvector is not installed for PostgreSQL ${versions.join(', ')}; the real-server suites need it.`,
        "Install it (e.g. postgresql-<version>-pgvector from PostgreSQL's own apt repository, or build it from source with",
        'postgresql-server-dev-<version>: make && sudo make install), then run npm test again.',
        '',
      ].join('\n'),
    );
    process.exit(1);
  }
  process.stderr.write(
    `npm test: building pgvector for PostgreSQL ${versions.join(', ')} from Debian's source package (apt's configured archive)\n`,
  );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const pkgs = ['make', 'gcc', 'xz-utils', ...versions.map((v) => `postgresql-server-dev-${v}`)];
  const apt = spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...pkgs], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env,
  });
  if (apt.status !== 0) {
    process.stderr.write(`npm test: 'apt-get install ${pkgs.join(' ')}' failed (exit ${apt.status ?? apt.signal})\n`);
    process.exit(1);
  }
  const dir = mkdtempSync(join(tmpdir(), 'ragaudit-pgvector-'));
  try {
    writeFileSync(join(dir, 'src.tar.gz'), (await pgvectorSource()).body);
    const steps = [['tar', ['xzf', 'src.tar.gz', '--strip-components=1']]];
    for (const v of versions) {
      const pgConfig = `PG_CONFIG=/usr/lib/postgresql/${v}/bin/pg_config`;
      // OPTFLAGS='' : no -march=native, so the build runs on any machine of this architecture.
      steps.push(
        ['make', ['-s', 'clean', pgConfig]],
        ['make', ['-s', pgConfig, 'OPTFLAGS=']],
        ['make', ['-s', 'install', pgConfig]],
      );
    }
    for (const [cmd, args] of steps) {
      const r = spawnSync(cmd, args, { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'], env });
      if (r.status !== 0) throw new Error(`'${cmd} ${args.join(' ')}' failed (exit ${r.status ?? r.signal})`);
    }
  } catch (e) {
    process.stderr.write(`npm test: could not build pgvector: ${e.message}\n`);
    process.exit(1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const need = missing();
if (need.length === 0) {
  await ensurePgvector();
  process.exit(0);
}

const pkgs = need.filter((m) => !m.custom).map((m) => m.pkg);
const canInstall = process.getuid?.() === 0 && executable('/usr/bin/apt-get') && pkgs.length === need.length;
if (canInstall) {
  process.stderr.write(
    `npm test: installing ${pkgs.join(', ')} with apt-get (missing: ${need.map((m) => m.what).join('; ')})\n`,
  );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', ...pkgs],
  ]) {
    const r = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env });
    if (r.status !== 0) {
      process.stderr.write(`npm test: 'apt-get ${args.join(' ')}' failed (exit ${r.status ?? r.signal})\n`);
      process.exit(1);
    }
  }
  const still = missing();
  if (still.length === 0) {
    await ensurePgvector();
    process.exit(0);
  }
  need.splice(0, need.length, ...still);
}

process.stderr.write(
  [
    'npm test: the test suites need tools that are not installed:',
    ...need.map((m) => `  - ${m.what}`),
    '',
    'Install them, then run npm test again:',
    `  sudo apt-get install -y ${[...new Set(need.map((m) => m.pkg))].join(' ')}        # Debian / Ubuntu`,
    ...(need.some((m) => m.pkg === 'chromium')
      ? ['  or point RAGAUDIT_CHROMIUM at an installed Chromium or Chrome binary.']
      : []),
    '',
  ].join('\n'),
);
process.exit(1);
