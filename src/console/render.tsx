import './types.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ConsoleSessionsService } from '../modules/console-sessions/index.js';
import { Layout, type NavKey, type PageContext } from './layout.js';

/** What a page needs to know about the request: its session, a CSRF token for its forms, the switcher's list. */
export async function pageContext(req: FastifyRequest, reply: FastifyReply, sessions: ConsoleSessionsService): Promise<PageContext> {
  const session = req.consoleSession;
  const workspaces = session ? await sessions.switchableWorkspaces(session) : [];
  // The token is bound to the request's session cookie (see consolePlugin): it works for this session only.
  return { session, csrfToken: reply.generateCsrf({ userInfo: req.consoleCsrfBinding }), workspaces };
}

/** Security headers for every HTML answer: never cached (pages show tenant data), never framed. */
function htmlReply(reply: FastifyReply, status: number) {
  return reply.status(status).type('text/html; charset=utf-8').header('cache-control', 'no-store');
}

/** Sends a whole page in the layout. `body` is TSX; every database string inside it must be escaped (`safe`). */
export async function sendPage(
  reply: FastifyReply,
  ctx: PageContext,
  page: { title: string; nav?: NavKey; body: JSX.Element; status?: number; scripts?: string[] },
): Promise<FastifyReply> {
  const safeBody = page.body; // markup built from TSX, escaped where its strings were written
  const html = await (
    <Layout title={page.title} nav={page.nav} ctx={ctx} scripts={page.scripts}>
      {safeBody}
    </Layout>
  );
  return htmlReply(reply, page.status ?? 200).send(html);
}

/** Sends an HTML fragment (an htmx swap target), no layout. */
export async function sendFragment(reply: FastifyReply, body: JSX.Element, status = 200): Promise<FastifyReply> {
  return htmlReply(reply, status).send(await body);
}

export function ErrorBody(props: { heading: string; message: string }) {
  return (
    <section class="error-page">
      <h1 safe>{props.heading}</h1>
      <p safe>{props.message}</p>
      <p>
        <a href="/console">Back to the dashboard</a>
      </p>
    </section>
  );
}
