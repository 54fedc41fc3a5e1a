/** The Chromium the browser tests drive: RAGAUDIT_CHROMIUM, default Debian's /usr/bin/chromium (checked by `pretest`). */
export const CHROMIUM_PATH = process.env.RAGAUDIT_CHROMIUM || '/usr/bin/chromium';
