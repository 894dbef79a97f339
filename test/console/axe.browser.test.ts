// The accessibility check every browser test relies on (test/helpers/browser.ts axeSeriousOrCritical) finds what it
// must: on a page without frames, checked in axe-core's legacy mode, and inside a frame, which that mode can miss.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { axeSeriousOrCritical, CHROMIUM_ARGS, CHROMIUM_PATH } from '../helpers/browser.js';

const CLEAN = '<!doctype html><html lang="en"><head><title>Clean</title></head><body><main><h1>Clean</h1><p>Text.</p></main></body></html>';
/** An image without alternative text (axe `image-alt`, critical) and a button without a name (`button-name`, critical). */
const FAULTS = '<img src="/a.png"><button></button>';

describe('the axe-core check of the browser tests', { timeout: 60_000 }, () => {
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
    page = await (await browser.newContext()).newPage();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('a clean page has no finding; a page without frames has its critical faults named', async () => {
    await page.setContent(CLEAN);
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    await page.setContent(CLEAN.replace('<p>Text.</p>', FAULTS));
    expect(page.frames()).toHaveLength(1);
    const found = await axeSeriousOrCritical(page, { firstNode: true });
    expect(found.map((f) => f.split(':')[0]).sort()).toEqual(['button-name', 'image-alt']);
    expect(found.find((f) => f.startsWith('image-alt'))).toContain('<img src="/a.png">');
  });

  it('a fault inside a frame is found, where the page around it is clean', async () => {
    const framed = CLEAN.replace(
      '<p>Text.</p>',
      `<iframe title="Inner" srcdoc='<!doctype html><html lang="en"><title>Inner</title><img src="/b.png">'></iframe>`,
    );
    await page.setContent(framed);
    await page.frames()[1]?.waitForLoadState('load');
    expect(page.frames()).toHaveLength(2);
    expect(await axeSeriousOrCritical(page, { firstNode: true })).toEqual([expect.stringMatching(/^image-alt: .*<img src="\/b\.png">/)]);
  });
});
