import type { FastifyInstance } from 'fastify';

type OpenApiDoc = {
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, { summary?: string; description?: string; tags?: string[]; requestBody?: unknown; parameters?: unknown[]; responses?: Record<string, { description?: string }> }>>;
};

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const GUIDE = `
<h2>Guide</h2>
<p>Every call under <code>/api/v1</code> needs <code>Authorization: Bearer &lt;workspace key&gt;</code>. A Team owner key may add
<code>X-Workspace-Client: &lt;workspace id&gt;</code> to act on a client workspace listed by <code>GET /api/v1/workspaces</code>.</p>
<p>Errors are JSON: <code>{"error": "...", "message": "..."}</code>; conflicts are <code>{"ok": false, "error": "&lt;code&gt;"}</code>.
A 429 carries <code>Retry-After</code> in seconds. Read-only calls may be retried on 5xx with exponential backoff and jitter.</p>
<p>Nothing here sends a message except <code>POST /replies/{id}/decide</code> with <code>send</code>, <code>invite</code> or <code>booking_link</code>.
Enrolling into an active, approved sequence lets the engine contact the lead on its next pass.</p>
<p>The machine-readable description is <a href="/api/v1/openapi.json">/api/v1/openapi.json</a> (OpenAPI 3.1).</p>`;

function renderDocs(doc: OpenApiDoc): string {
  const ops: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths).sort(([a], [b]) => a.localeCompare(b))) {
    for (const [method, op] of Object.entries(methods)) {
      const responses = Object.entries(op.responses ?? {})
        .map(([code, r]) => `<li><code>${escapeHtml(code)}</code> ${escapeHtml(r.description ?? '')}</li>`)
        .join('');
      ops.push(`<section class="op"><h3><span class="m">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
<p>${escapeHtml(op.summary ?? '')}</p>${op.description ? `<p>${escapeHtml(op.description)}</p>` : ''}<ul>${responses}</ul></section>`);
    }
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(doc.info.title)} — API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:920px;margin:2em auto;padding:0 1em;color:#222}
code{background:#f3f3f3;padding:0 .25em;border-radius:3px}.op{border-top:1px solid #ddd;padding:.5em 0}
.m{display:inline-block;min-width:4.5em;font-weight:700;color:#0a5}</style></head><body>
<h1>${escapeHtml(doc.info.title)} <small>v${escapeHtml(doc.info.version)}</small></h1>
<p>${escapeHtml(doc.info.description ?? '')}</p>${GUIDE}<h2>Reference</h2>${ops.join('\n')}</body></html>`;
}

/** The description and the reference page are public: they need no key. */
export function registerDocs(app: FastifyInstance, apiPrefix: string): void {
  let html: string | null = null;
  app.get(`${apiPrefix}/openapi.json`, { schema: { hide: true }, config: { public: true } }, async () => app.swagger());
  app.get('/docs', { schema: { hide: true } }, async (_req, reply) => {
    html ??= renderDocs(app.swagger() as unknown as OpenApiDoc);
    return reply.type('text/html; charset=utf-8').send(html);
  });
}
