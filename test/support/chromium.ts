/**
 * Launches Debian's Chromium (/usr/bin/chromium) with playwright-core, with the flags every
 * browser-driven tier of Context Lens uses (webview tier, end-to-end tier, panel benchmark).
 * Nothing is downloaded: playwright-core only drives the system browser.
 */
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import type { Browser, LaunchOptions } from 'playwright-core';

/** The browser binary; CHROMIUM_PATH overrides it (e.g. on a machine with Chromium elsewhere). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Headless, no sandbox (root in containers), and no background traffic of any kind. */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * Starts Chromium. Extra `args` are appended to CHROMIUM_ARGS; other options pass through to
 * playwright's `launch`. Throws with the install command when the binary is missing.
 */
export async function launchChromium(options: LaunchOptions = {}): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`Chromium not found at ${CHROMIUM_PATH}: run \`apt-get install -y chromium\` (or set CHROMIUM_PATH).`);
  }
  const { args = [], ...rest } = options;
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    timeout: 30_000,
    ...rest,
    args: [...CHROMIUM_ARGS, ...args],
  });
}
