#!/usr/bin/env node
/**
 * What `npm test` needs beyond npm, checked before the tests start (the `pretest` step):
 *   - PostgreSQL's server binaries: the shared SqlClient suite starts a throwaway server;
 *   - Chromium (RAGAUDIT_CHROMIUM, default /usr/bin/chromium): the HTML report and JUnit XML
 *     are checked in a real browser.
 * When something is missing and we are root on Debian/Ubuntu, it is installed with apt-get;
 * otherwise the exact command to run is printed and the tests do not start (exit 1), so a fresh
 * machine never reports skipped or failed suites for a missing tool.
 */
import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

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

const need = missing();
if (need.length === 0) process.exit(0);

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
  if (still.length === 0) process.exit(0);
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
