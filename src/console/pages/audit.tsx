import type { AppInstance } from '../../app/types.js';
import { AppError } from '../../lib/errors.js';
import type { ConsoleDeps } from '../deps.js';
import { Table } from '../layout.js';
import { pageContext, sendPage } from '../render.js';
import { EmptyState, NoticeBox, When } from '../ui.js';

type Query = { person?: string; action?: string; from?: string; to?: string; cursor?: string };

/** The audit trail for admins (docs/roles.md "Audit trail"): filter by person, action and date, newest first. */
export function auditPages(app: AppInstance, deps: ConsoleDeps) {
  const { audit, people } = deps.services;

  app.get<{ Querystring: Query }>('/console/audit', { schema: { hide: true } }, async (req, reply) => {
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    const workspaceId = req.consoleSession!.auth.workspaceId;
    const q = req.query;
    const team = await people.list(workspaceId);
    const day = (v: string | undefined, next = false) => {
      if (!v || !/^\d{4}-\d{2}-\d{2}$/.test(v)) return undefined;
      const d = new Date(`${v}T00:00:00.000Z`);
      if (next) d.setUTCDate(d.getUTCDate() + 1);
      return d.toISOString();
    };
    let page: Awaited<ReturnType<typeof audit.list>> = { entries: [], nextCursor: null };
    let refused: string | null = null;
    try {
      page = await audit.list(workspaceId, { actor: q.person, action: q.action?.trim(), from: day(q.from), to: day(q.to, true), cursor: q.cursor, limit: 50 });
    } catch (err) {
      if (!(err instanceof AppError) || err.statusCode >= 500) throw err;
      refused = err.message;
    }
    const more = page.nextCursor ? `/console/audit?${new URLSearchParams({ ...stripEmpty(q), cursor: page.nextCursor }).toString()}` : null;
    return sendPage(reply, ctx, {
      title: 'Audit',
      nav: 'audit',
      status: refused ? 400 : 200,
      body: (
        <>
          <h1>Audit trail</h1>
          <p>Sign-ins, people, keys, connects, webhooks, suppression removals, approvals and activations: who did what, and when.</p>
          <NoticeBox notice={refused ? { kind: 'refused', text: refused } : null} />
          <form method="get" action="/console/audit" class="filters">
            <label for="audit-person">Person</label>
            <select id="audit-person" name="person">
              <option value="">Anyone</option>
              {team.map((p) => (
                <option value={p.id} selected={p.id === q.person} safe>
                  {`${p.name} <${p.email}>`}
                </option>
              ))}
            </select>
            <label for="audit-action">Action</label>
            <input id="audit-action" name="action" type="text" value={q.action ?? ''} placeholder="person.invited" />
            <label for="audit-from">From</label>
            <input id="audit-from" name="from" type="date" value={q.from ?? ''} />
            <label for="audit-to">To</label>
            <input id="audit-to" name="to" type="date" value={q.to ?? ''} />
            <button type="submit">Filter</button>
          </form>
          {page.entries.length === 0 ? (
            <EmptyState title="Nothing recorded for this filter." />
          ) : (
            <Table
              caption="Newest first"
              columns={['When', 'Who', 'Action', 'Subject', 'Detail']}
              items={page.entries}
              row={(e) => (
                <tr>
                  <td>
                    <When at={e.at} />
                  </td>
                  <td safe>{e.actor.label}</td>
                  <td>
                    <code safe>{e.action}</code>
                  </td>
                  <td safe>{e.subject ?? ''}</td>
                  <td class="id" safe>
                    {Object.keys(e.detail).length ? JSON.stringify(e.detail) : ''}
                  </td>
                </tr>
              )}
            />
          )}
          {more ? (
            <p>
              <a href={more}>Older entries</a>
            </p>
          ) : (
            ''
          )}
        </>
      ),
    });
  });
}

const stripEmpty = (q: Query): Record<string, string> =>
  Object.fromEntries(Object.entries(q).filter((e): e is [string, string] => e[0] !== 'cursor' && typeof e[1] === 'string' && e[1] !== ''));
