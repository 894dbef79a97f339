import { chromium, type Browser, type Page } from 'playwright-core';
import type { TestApp } from './build-test-app.js';

/** Debian's chromium, headless, with nothing that reaches the network on its own. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * One browser and one page per test file (launching is the slow part): call in beforeAll, `close()` in afterAll.
 * The app listens on a real socket on 127.0.0.1; `url(path)` builds addresses on it.
 */
export async function launchConsoleBrowser(
  t: TestApp,
): Promise<{ browser: Browser; page: Page; base: string; url(path: string): string; close(): Promise<void> }> {
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  return {
    browser,
    page,
    base: address,
    url: (path: string) => `${address}${path}`,
    close: async () => {
      await browser.close();
    },
  };
}
