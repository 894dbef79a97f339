import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import scalarApiReference from '@scalar/fastify-api-reference';
import { escapeHtml, renderMarkdown } from '../docs/markdown.js';

// src/app/plugins and dist/app/plugins are both three levels below the package root, where docs/ lives.
const GUIDE_PATH = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'docs', 'guide.md');

function renderGuide(title: string): string {
  let body: string;
  try {
    body = renderMarkdown(readFileSync(GUIDE_PATH, 'utf8'));
  } catch {
    body = '<p>The guide (docs/guide.md) is not part of this installation. The reference is at <a href="/docs">/docs</a>.</p>';
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}: guide</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.55 system-ui,sans-serif;max-width:860px;margin:2em auto;padding:0 1em;color:#1d1d1f}
code{background:#f2f2f4;padding:0 .25em;border-radius:3px}pre{background:#f2f2f4;padding:.8em;overflow:auto;border-radius:6px}
pre code{background:none;padding:0}a{color:#0b57d0}</style></head><body><main>
<p><a href="/docs">API reference</a> · <a href="/console">Console</a></p>
${body}
</main></body></html>`;
}

/**
 * The description, the interactive reference and the guide are public: they need no key. The reference is Scalar's
 * bundle, served by this process (its plugin ships the JavaScript), so /docs works offline; the default web fonts
 * are off because they would come from Scalar's CDN.
 */
export async function registerDocs(app: FastifyInstance, apiPrefix: string): Promise<void> {
  app.get(`${apiPrefix}/openapi.json`, { schema: { hide: true }, config: { public: true } }, async () => app.swagger());
  let guide: string | null = null;
  app.get('/docs/guide', { schema: { hide: true } }, async (_req, reply) => {
    guide ??= renderGuide((app.swagger() as { info: { title: string } }).info.title);
    return reply.type('text/html; charset=utf-8').send(guide);
  });
  await app.register(scalarApiReference, {
    routePrefix: '/docs',
    logLevel: 'warn',
    configuration: {
      url: `${apiPrefix}/openapi.json`,
      withDefaultFonts: false,
      hideClientButton: true,
      metaData: { title: 'Workspace Outreach Service: API reference' },
    },
  });
}
