import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { DOCS_CSP } from '../../src/app/plugins/docs.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

const get = (url: string) => t.app.inject({ method: 'GET', url });

/** The Scalar configuration the page hands to its start-up script (a data attribute). */
function configurationOf(html: string): Record<string, unknown> {
  const raw = /data-configuration="([^"]*)"/.exec(html)![1];
  return JSON.parse(
    raw
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&'),
  ) as Record<string, unknown>;
}

describe('rule: /docs has a Content-Security-Policy and nosniff, and Scalar features that reach other hosts are off', () => {
  it('every /docs answer (page, bundle, start-up script, guide) carries the CSP and X-Content-Type-Options: nosniff', async () => {
    for (const url of ['/docs/', '/docs/js/scalar.js', '/docs/js/start.js', '/docs/guide']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-security-policy'], url).toBe(DOCS_CSP);
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
    }
    expect((await get('/docs/js/start.js')).headers['content-type']).toMatch(/^application\/javascript/);
  });

  it('the CSP allows this server only: scripts without inline code, requests, images and fonts from self, no framing', () => {
    const directives = Object.fromEntries(DOCS_CSP.split(/;\s*/).map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));
    expect(directives['default-src']).toEqual(["'self'"]);
    expect(directives['script-src']).toEqual(["'self'"]);
    expect(directives['connect-src']).toEqual(["'self'"]);
    expect(directives['frame-ancestors']).toEqual(["'none'"]);
    expect(directives['object-src']).toEqual(["'none'"]);
    for (const sources of Object.values(directives)) {
      expect(sources.filter((s: string) => /^(https?:|\*|wss?:)/.test(s))).toEqual([]);
    }
  });

  it('the page has a language, no inline script, and turns off Ask AI, MCP, telemetry, the developer tools and CDN fonts', async () => {
    const res = await get('/docs/');
    expect(res.body).toMatch(/^<!doctype html>\s*<html lang="en">/);
    expect(res.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(res.body).toContain('<script src="js/scalar.js"></script>');
    expect(res.body).toContain('<script src="js/start.js"></script>');
    const config = configurationOf(res.body);
    expect(config).toMatchObject({
      url: '/api/v1/openapi.json',
      agent: { disabled: true },
      mcp: { disabled: true },
      telemetry: false,
      showDeveloperTools: 'never',
      hideClientButton: true,
      withDefaultFonts: false,
    });
    expect(JSON.stringify(config)).not.toMatch(/https?:\/\//);
  });

  it('/docs still redirects to /docs/, and the console keeps its own stricter CSP', async () => {
    const bare = await get('/docs');
    expect([bare.statusCode, bare.headers.location]).toEqual([301, '/docs/']);
    const consolePage = await get('/console/sign-in');
    expect(consolePage.headers['content-security-policy']).not.toBe(DOCS_CSP);
    expect(consolePage.headers['content-security-policy']).not.toContain('unsafe-inline');
  });
});
