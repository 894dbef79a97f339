import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { renderMarkdown } from '../../src/app/docs/markdown.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

/** Every absolute URL in src/href attributes of a page: the reference must not reach outside this server. */
function externalAssets(html: string): string[] {
  return [...html.matchAll(/(?:src|href)\s*=\s*["'](https?:\/\/[^"']+)["']/g)].map((m) => m[1]);
}

describe('/docs: the interactive reference (issue 15 §8)', () => {
  it('GET /docs answers an HTML page that loads the reference from this server only, without a key', async () => {
    const bare = await t.app.inject({ method: 'GET', url: '/docs' });
    expect([bare.statusCode, bare.headers.location]).toEqual([301, '/docs/']);
    const res = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toContain('src="js/scalar.js"');
    expect(res.body).toContain('/api/v1/openapi.json');
    expect(externalAssets(res.body)).toEqual([]);
  });

  it('the reference bundle is served locally, so /docs works offline', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/js/scalar.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.body.length).toBeGreaterThan(100_000);
  });

  it('the description it renders has parameters and schemas (the reference shows what the document holds)', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const get = doc.paths['/api/v1/x/leads/{id}'].get;
    expect(get.parameters.some((p: { in: string; name: string }) => p.in === 'path' && p.name === 'id')).toBe(true);
    expect(get.security ?? doc.security).toBeTruthy();
  });
});

describe('/docs/guide: keys, errors and retries, signatures, MCP', () => {
  it('renders docs/guide.md as HTML: headings, code, links; no raw Markdown backticks', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/guide' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    for (const heading of ['Keys and the Team selector', 'Errors and retries', 'Verifying webhook signatures', 'Connecting an MCP client']) {
      expect(res.body).toContain(`>${heading}</h2>`);
    }
    expect(res.body).toContain('<code>X-Workspace-Client: &lt;workspace id&gt;</code>');
    expect(res.body).toContain('verifyWebhook');
    expect(res.body).toContain('stripe.webhooks.constructEvent');
    expect(res.body).not.toMatch(/`[A-Za-z]/);
    expect(externalAssets(res.body)).toEqual([]);
  });

  it('every code block is keyboard-focusable, so a long line can be scrolled to without a mouse (axe: scrollable-region-focusable)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/guide' });
    const pres = res.body.match(/<pre\b[^>]*>/g) ?? [];
    expect(pres.length).toBeGreaterThan(0);
    expect(pres.filter((tag) => !/\btabindex="0"/.test(tag))).toEqual([]);
  });

  it('the guide renderer escapes HTML in the source and drops unsafe link targets', () => {
    const html = renderMarkdown(
      '# A <b>title</b>\n\nText <script>alert(1)</script> and [x](javascript:alert(1)) and `<i>`\n\n```\n<img src=x onerror=alert(1)>\n```',
    );
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('javascript:');
    expect(html).toContain('&lt;script&gt;');
    expect(html).toContain('<code>&lt;i&gt;</code>');
  });
});
