import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { ApiReferenceConfiguration } from '@scalar/fastify-api-reference';
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
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<style>body{font:16px/1.55 system-ui,sans-serif;max-width:860px;margin:2em auto;padding:0 1em;color:#1d1d1f}
code{background:#f2f2f4;padding:0 .25em;border-radius:3px}pre{background:#f2f2f4;padding:.8em;overflow:auto;border-radius:6px}
pre code{background:none;padding:0}a{color:#0b57d0}</style></head><body><main>
<p><a href="/docs">API reference</a> · <a href="/console">Console</a></p>
${body}
</main></body></html>`;
}

/**
 * Scalar's default theme fails axe's colour-contrast rule (muted text, the method badges, the accent: 3–4.3:1
 * where 4.5:1 is needed), its code blocks' copy buttons have their name in an element hidden until the block is
 * hovered, and a tag's list of endpoints scrolls sideways without being focusable. Darker colours (4.5:1 or more
 * on each of the theme's backgrounds), the name made readable and long paths wrapped instead of scrolled fix them.
 */
const A11Y_CSS = `
.light-mode {
  --scalar-color-2: #5c5c5c !important;
  --scalar-color-3: #636363 !important;
  --scalar-color-accent: #0065ad !important;
  --scalar-color-blue: #0067a8 !important;
  --scalar-color-green: #08734a !important;
  --scalar-color-red: #c8000a !important;
  --scalar-color-yellow: #7d6000 !important;
  --scalar-color-orange: #a83a00 !important;
  --scalar-color-purple: #5203d1 !important;
  --scalar-color-query: #006a6e !important;
}
.dark-mode {
  --scalar-color-3: #8f8f8f !important;
  --scalar-color-red: #f0504e !important;
}
.scalar-code-copy .sr-only .hidden { display: inline !important; }
.scalar-code-copy .sr-only .hidden > span:first-child { display: none !important; }
.endpoints { overflow: visible !important; }
.endpoints .endpoint { white-space: normal !important; }
.endpoints .endpoint-path { min-width: 0 !important; overflow-wrap: anywhere; }
`;

/**
 * The reference page's Scalar configuration. Everything that would reach a host other than this server is off:
 * the AI agent ("Ask AI"), MCP generation, telemetry, the developer toolbar (its "Share"/"Deploy" upload the API
 * description to Scalar), the hosted API client button and Scalar's CDN fonts. A feature a later Scalar adds
 * without a switch here is still held to this server by the page's CSP (DOCS_CSP).
 */
export const SCALAR_CONFIGURATION: Partial<ApiReferenceConfiguration> = {
  withDefaultFonts: false,
  hideClientButton: true,
  telemetry: false,
  showDeveloperTools: 'never',
  agent: { disabled: true, hideAddApi: true },
  mcp: { disabled: true },
  persistAuth: false,
  metaData: { title: 'Workspace Outreach Service: API reference' },
  // Accessibility fixes on Scalar's own markup (axe, serious and critical); see docs/api-reference.md.
  customCss: A11Y_CSS,
};

/**
 * The CSP of every /docs answer: scripts only from this server (no inline script: the start-up code is the file
 * `js/start.js`), requests (fetch, images, fonts) to this server only, no framing, no form posts elsewhere. Scalar
 * injects `<style>` elements at run time, hence `'unsafe-inline'` for styles only.
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "frame-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "object-src 'none'",
].join('; ');

/**
 * The start-up script: reads the configuration from the page (a data attribute, so no inline script is needed).
 * It also mends two ARIA mistakes of Scalar's "Test request" client as its elements appear: its key/value editors
 * are comboboxes without `aria-expanded` (axe: critical), and a popover button has `role="none"` next to its
 * `aria-label` (axe: serious).
 */
const START_SCRIPT = `(function () {
  var el = document.getElementById('app');
  var configuration = JSON.parse(el.getAttribute('data-configuration'));
  el.removeAttribute('data-configuration');
  var pending = false;
  function mend() {
    pending = false;
    document.querySelectorAll('[role="combobox"]:not([aria-expanded])').forEach(function (e) { e.setAttribute('aria-expanded', 'false'); });
    document.querySelectorAll('button[role="none"][aria-label]').forEach(function (e) { e.removeAttribute('role'); });
  }
  // Once per frame at most, however many nodes Scalar adds.
  new MutationObserver(function () {
    if (!pending) {
      pending = true;
      requestAnimationFrame(mend);
    }
  }).observe(document.body, { childList: true, subtree: true });
  // Samples and "Send" use the address this page was loaded from: the document's server (the public base) can be
  // another name of this host (localhost for 127.0.0.1), which the page's CSP (connect-src 'self') would refuse.
  configuration.servers = [{ url: location.origin, description: 'This server' }];
  Scalar.createApiReference('#app', configuration);
})();
`;

function renderReferencePage(configuration: Record<string, unknown>): string {
  const title = String((configuration.metaData as { title?: string } | undefined)?.title ?? 'API reference');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>${escapeHtml(title)}</title>
    <link rel="icon" href="/favicon.svg" type="image/svg+xml">
  </head>
  <body>
    <div id="app" data-configuration="${escapeHtml(JSON.stringify(configuration))}"></div>
    <script src="js/scalar.js"></script>
    <script src="js/start.js"></script>
  </body>
</html>
`;
}

/**
 * The document with `servers`: the service's public base (OUTREACH_PUBLIC_URL, else `http://localhost:<bound port>`,
 * config.publicBase), so a code sample or a generated client names the full URL: base + a path (`/api/v1/…`). Placed
 * after `info` and before `paths`, where readers look for it.
 */
export function withServers(doc: Record<string, unknown>, base: string): Record<string, unknown> {
  const { openapi, info, ...rest } = doc;
  return { openapi, info, servers: [{ url: base, description: 'This service (OUTREACH_PUBLIC_URL)' }], ...rest };
}

/**
 * The description, the interactive reference and the guide are public: they need no key. The reference is Scalar's
 * bundle, served by this process (its plugin ships the JavaScript), so /docs works offline; the page itself is ours
 * (`lang`, no inline script) and every /docs answer carries DOCS_CSP and `X-Content-Type-Options: nosniff`.
 */
export async function registerDocs(app: FastifyInstance, apiPrefix: string, publicBase: { url(): string }): Promise<void> {
  // `servers` is added per answer, not in the cached document: with PORT=0 the public base is known only once the
  // server listens. The paths already start with the prefix, so the server is the base alone.
  app.get(`${apiPrefix}/openapi.json`, { schema: { hide: true }, config: { public: true } }, async () =>
    withServers(app.swagger() as unknown as Record<string, unknown>, publicBase.url()),
  );
  const configuration: Partial<ApiReferenceConfiguration> = { _integration: 'fastify', url: `${apiPrefix}/openapi.json`, ...SCALAR_CONFIGURATION };
  const page = renderReferencePage(configuration);
  await app.register(async (docs) => {
    docs.addHook('onSend', async (_req, reply, payload) => {
      reply.header('content-security-policy', DOCS_CSP);
      reply.header('x-content-type-options', 'nosniff');
      reply.header('referrer-policy', 'no-referrer');
      return payload;
    });
    // Scalar's plugin renders its own page with an inline start-up script and no `lang`; ours replaces it, and the
    // plugin still serves the bundle at /docs/js/scalar.js.
    docs.addHook('onRoute', (route) => {
      if (route.url !== '/docs/' || route.method !== 'GET') return;
      route.handler = async (req, reply) => {
        // `/docs` reaches this route too (ignoreTrailingSlash); the page loads its scripts by relative path.
        if (!req.url.split('?')[0].endsWith('/')) return reply.redirect('/docs/', 301);
        return reply.type('text/html; charset=utf-8').send(page);
      };
    });
    let guide: string | null = null;
    docs.get('/docs/guide', { schema: { hide: true } }, async (_req, reply) => {
      guide ??= renderGuide((app.swagger() as { info: { title: string } }).info.title);
      return reply.type('text/html; charset=utf-8').send(guide);
    });
    docs.get('/docs/js/start.js', { schema: { hide: true }, logLevel: 'warn' }, async (_req, reply) =>
      reply.type('application/javascript; charset=utf-8').send(START_SCRIPT),
    );
    // Loaded here, not at the top: every CLI command imports the app's modules, and this bundle alone is ~40 MB of
    // memory (the CLI's peak RSS, issue 39 §2).
    const { default: scalarApiReference } = await import('@scalar/fastify-api-reference');
    await docs.register(scalarApiReference, { routePrefix: '/docs', logLevel: 'warn', configuration });
  });
}
