import type { FastifyReply } from 'fastify';
import type { AppInstance } from '../../app/types.js';
import type { UnsubscribeService } from './unsubscribe.service.js';

// The public unsubscribe pages behind every e-mail's List-Unsubscribe link (docs/email.md). GET only shows a page with
// one button and changes nothing, because mail scanners and link previews fetch links; POST (the button, or a mail
// client's RFC 8058 one-click POST of `List-Unsubscribe=One-Click`) opts out at once. No key: the token is the
// capability, so a bad or tampered token is a plain 404 and the token never reaches a log (redactUrl).

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, body: string) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;line-height:1.5}button{font:inherit;padding:.5rem 1rem}</style></head><body><main>${body}</main></body></html>`;
}

function send(reply: FastifyReply, status: number, html: string) {
  return reply
    .status(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-robots-tag', 'noindex')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
    .send(html);
}

const notFound = (reply: FastifyReply) => send(reply, 404, page('Not found', '<h1>Not found</h1><p>This unsubscribe link is not valid.</p>'));

export async function unsubscribeRoutes(app: AppInstance, opts: { unsubscribe: UnsubscribeService }) {
  // Mail clients post `List-Unsubscribe=One-Click` as a form (or multipart); the body carries nothing we need.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, payload, done) => {
    payload.resume();
    payload.on('end', () => done(null, undefined));
    payload.on('error', (err) => done(err, undefined));
  });

  app.get<{ Params: { token: string } }>('/u/:token', { schema: { hide: true }, config: { public: true } }, async (req, reply) => {
    const found = await opts.unsubscribe.describe(req.params.token);
    if (!found) return notFound(reply);
    if (found.alreadyOptedOut)
      return send(reply, 200, page('Unsubscribed', '<h1>You are unsubscribed</h1><p>You will not receive further e-mail from us.</p>'));
    return send(
      reply,
      200,
      page(
        'Unsubscribe',
        `<h1>Unsubscribe</h1><p>Stop all further e-mail from us to this address?</p><form method="post" action="/u/${escapeHtml(req.params.token)}"><button type="submit">Unsubscribe</button></form>`,
      ),
    );
  });

  app.post<{ Params: { token: string } }>('/u/:token', { schema: { hide: true }, config: { public: true } }, async (req, reply) => {
    const done = await opts.unsubscribe.unsubscribe(req.params.token);
    if (!done) return notFound(reply);
    return send(reply, 200, page('Unsubscribed', '<h1>You are unsubscribed</h1><p>You will not receive further e-mail from us.</p>'));
  });
}
