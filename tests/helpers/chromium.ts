import { accessSync, constants } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** The Chromium the browser tests drive: RAGAUDIT_CHROMIUM, default Debian's /usr/bin/chromium (checked by `pretest`). */
export const CHROMIUM_PATH = process.env.RAGAUDIT_CHROMIUM || '/usr/bin/chromium';

/** Launches it headless; a missing browser fails the test with what to install, never skips it. */
export async function launchChromium(): Promise<Browser> {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
  } catch {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}: install it (apt-get install chromium) or set RAGAUDIT_CHROMIUM to its path`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
}
