import { TableHead } from '../layout.js';
import type { FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import { ACTIVITY_ACTIONS, ACTIVITY_OUTCOMES, LEAD_STAGES } from '../../domain/vocabulary.js';
import { ActivityQuery } from '../../modules/activity/index.js';
import { LeadsQuery } from '../../modules/leads/index.js';
import type { ConsoleDeps } from '../plugin.js';
import { pageContext, sendPage } from '../render.js';

/**
 * A GET form sends every field, the empty ones as `name=`. Empty means "no filter" here, so those are dropped
 * before the API's own querystring schema validates what is left (the same bounds and messages as the API).
 */
async function dropEmptyFields(req: FastifyRequest) {
  const query = req.query as Record<string, unknown>;
  for (const [k, v] of Object.entries(query)) if (v === '') delete query[k];
}

const when = (iso: string | null) => (iso ? iso.slice(0, 16).replace('T', ' ') : '—');

function Select(props: { id: string; name: string; label: string; options: readonly string[]; value?: string; any: string }) {
  return (
    <p>
      <label for={props.id}>{props.label}</label>
      <select id={props.id} name={props.name}>
        <option value="">{props.any}</option>
        {props.options.map((o) => (
          <option value={o} selected={o === props.value}>
            {o}
          </option>
        ))}
      </select>
    </p>
  );
}

/** Leads and the activity ledger, with the API's filters as GET forms, through the crm-leads and activity services. */
export function leadsActivityPages(app: AppInstance, deps: ConsoleDeps) {
  const { leads, activity } = deps.services;

  app.get<{ Querystring: Static<typeof LeadsQuery> }>(
    '/console/leads',
    { schema: { hide: true, querystring: LeadsQuery }, preValidation: dropEmptyFields },
    async (req, reply) => {
      const ctx = await pageContext(req, reply, deps.services.consoleSessions);
      const q = req.query;
      const limit = q.limit ?? 100;
      const result = await leads.listLeads(req.consoleSession!.auth.workspaceId, { ...q, limit });
      return sendPage(reply, ctx, {
        title: 'Leads',
        nav: 'leads',
        body: (
          <>
            <h1>Leads</h1>
            <form method="get" action="/console/leads" class="filters" role="search" aria-label="Filter leads">
              <Select id="lead-stage" name="stage" label="Stage reached" options={LEAD_STAGES} value={q.stage} any="Any stage" />
              <p>
                <label for="lead-q">Name, company or title</label>
                <input id="lead-q" name="q" type="search" value={q.q ?? ''} maxlength="200" />
              </p>
              <p>
                <label for="lead-since">Engaged in the last N days</label>
                <input id="lead-since" name="sinceDays" type="number" min="1" max="365" value={q.sinceDays === undefined ? '' : String(q.sinceDays)} />
              </p>
              <p>
                <label class="check">
                  <input type="checkbox" name="engaged" value="1" checked={q.engaged === '1'} /> <span>Engaged only</span>
                </label>
                <label class="check">
                  <input type="checkbox" name="booked" value="1" checked={q.booked === '1'} /> <span>Meeting booked</span>
                </label>
              </p>
              <p>
                <button type="submit">Filter</button> <a href="/console/leads">Clear</a>
              </p>
            </form>
            <p role="status">{`${result.count} leads match; showing ${result.returned}, newest first.`}</p>
            {result.returned === 0 ? null : (
              <table>
                <TableHead columns={['Person', 'Company', 'Stage', 'Next action', 'Replied', 'Last error']} />
                <tbody>
                  {result.leads.map((l) => (
                    <tr>
                      <td safe>{l.person ?? '—'}</td>
                      <td safe>{l.company ?? '—'}</td>
                      <td safe>{l.stage}</td>
                      <td>{when(l.nextActionAt)}</td>
                      <td>{when(l.repliedAt)}</td>
                      <td safe>{l.lastError ?? ''}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </>
        ),
      });
    },
  );

  app.get<{ Querystring: Static<typeof ActivityQuery> }>(
    '/console/activity',
    { schema: { hide: true, querystring: ActivityQuery }, preValidation: dropEmptyFields },
    async (req, reply) => {
      const ctx = await pageContext(req, reply, deps.services.consoleSessions);
      const q = req.query;
      const result = await activity.listActivity(req.consoleSession!.auth.workspaceId, { ...q, limit: q.limit ?? 100 });
      return sendPage(reply, ctx, {
        title: 'Activity',
        nav: 'activity',
        body: (
          <>
            <h1>Activity</h1>
            <form method="get" action="/console/activity" class="filters" role="search" aria-label="Filter activity">
              <Select id="activity-action" name="action" label="Action" options={ACTIVITY_ACTIONS} value={q.action} any="Any action" />
              <Select id="activity-outcome" name="outcome" label="Outcome" options={ACTIVITY_OUTCOMES} value={q.outcome} any="Any outcome" />
              <p>
                <label for="activity-account">Account id</label>
                <input id="activity-account" name="account" type="text" value={q.account ?? ''} maxlength="100" />
              </p>
              <p>
                <label for="activity-since">Last N days</label>
                <input id="activity-since" name="sinceDays" type="number" min="1" max="365" value={q.sinceDays === undefined ? '' : String(q.sinceDays)} />
              </p>
              <p>
                <button type="submit">Filter</button> <a href="/console/activity">Clear</a>
              </p>
            </form>
            <p role="status">{`${result.count} entries match; showing ${result.returned}, newest first.`}</p>
            {result.returned === 0 ? null : (
              <table>
                <TableHead columns={['When', 'Action', 'Outcome', 'Lead', 'Account', 'Detail']} />
                <tbody>
                  {result.actions.map((a) => (
                    <tr>
                      <td>{when(a.createdAt)}</td>
                      <td safe>{a.action}</td>
                      <td safe>{a.outcome}</td>
                      <td safe>{a.lead.person ?? (a.lead.id ? a.lead.id : '—')}</td>
                      <td safe>{a.account ?? '—'}</td>
                      <td safe>{a.detail ?? ''}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </>
        ),
      });
    },
  );
}
