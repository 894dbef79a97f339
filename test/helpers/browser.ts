import { AxeBuilder } from '@axe-core/playwright';
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

/**
 * axe-core's serious and critical findings on the page as it is now, as `id: help` lines (empty: clean); with
 * `firstNode`, each line ends with the first offending element's HTML. Every rule runs, in the page and its frames.
 * A page without frames is checked in legacy mode (@axe-core/playwright `setLegacyMode`): axe runs in the page
 * itself rather than joining its frames' results in a blank page it opens for that, the same rules in 0.8-0.9 s a
 * call instead of 2.4 s. A page with frames is checked the full way: legacy mode missed a finding inside a `srcdoc`
 * frame.
 */
export async function axeSeriousOrCritical(page: Page, opts: { firstNode?: boolean } = {}): Promise<string[]> {
  const result = await new AxeBuilder({ page }).setLegacyMode(page.frames().length === 1).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help}${opts.firstNode ? ` (${v.nodes[0]?.html})` : ''}`);
}

/** The page's scrollWidth on a 390px-wide phone screen (tables scroll inside themselves), then back to desktop. */
export async function phoneScrollWidth(page: Page): Promise<number> {
  const before = page.viewportSize() ?? { width: 1200, height: 800 };
  await page.setViewportSize({ width: 390, height: 800 });
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  await page.setViewportSize(before);
  return width;
}

/** Opens `url` (the console's sign-in form stands in front of it) and signs in with the workspace key `key`. */
export async function signInWithKey(page: Page, url: string, key: string) {
  await page.goto(url);
  await page.getByRole('textbox', { name: 'Workspace key' }).fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** A browser test's afterAll: closes the browser, then the app (either is absent when beforeAll failed before it). */
export async function closeBrowserAndApp(b: { close(): Promise<void> } | undefined, t: TestApp | undefined) {
  await b?.close();
  await t?.close();
}
