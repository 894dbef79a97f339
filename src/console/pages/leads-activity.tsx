import { Table } from '../layout.js';
import type { FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import { Uuid } from '../../app/schemas.js';
import { ACTIVITY_ACTIONS, ACTIVITY_OUTCOMES, LEAD_STAGES } from '../../domain/vocabulary.js';
import { ActivityQuery } from '../../modules/activity/index.js';
import { LeadsQuery } from '../../modules/leads/index.js';
import { activityDetailText, activityLabel } from '../activity-text.js';
import type { ConsoleDeps } from '../deps.js';
import { pageContext, sendPage } from '../render.js';
import { Badge, EmptyState, PrimaryLink, When, formatNumber, plural } from '../ui.js';

/**
 * A GET form sends every field, the empty ones as `name=`. Empty means "no filter" here, so those are dropped
 * before the API's own querystring schema validates what is left (the same bounds and messages as the API).
 */
async function dropEmptyFields(req: FastifyRequest) {
  const query = req.query as Record<string, unknown>;
  for (const [k, v] of Object.entries(query)) if (v === '') delete query[k];
}

// The console pages by keyset (issue 27 §5): `before` is the previous page's last row, `after` the first. The API's
// GET /leads and GET /activity have no cursor in the spec, so these exist on the console's routes only.
const Cursors = {
  before: Type.Optional(Uuid({ description: 'the rows older than this one (the "Older" link)' })),
  after: Type.Optional(Uuid({ description: 'the rows newer than this one (the "Newer" link)' })),
};
/** The API's page-size bounds without its default (200), so a page without `limit` shows the console's 100. */
const pageSize = (max: number) => Type.Optional(Type.Integer({ minimum: 1, maximum: max, description: `page size, 1 to ${max} (default 100)` }));
const ConsoleLeadsQuery = Type.Object({ ...LeadsQuery.properties, limit: pageSize(500), ...Cursors }, { additionalProperties: true });
const ConsoleActivityQuery = Type.Object(
  {
    ...ActivityQuery.properties,
    limit: pageSize(1000),
    ...Cursors,
    lead: Type.Optional(
      Type.String({ maxLength: 200, pattern: '^[^\\x00-\\x1f\\x7f]*$', description: "part of the lead's name; % and _ are literal; no control characters" }),
    ),
  },
  { additionalProperties: true },
);

/** The page's own address with the same filters and another cursor (or none: the newest page). */
function pageHref(path: string, query: Record<string, unknown>, cursor: { before?: string; after?: string }) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (k === 'before' || k === 'after' || k === 'notice') continue;
    if (typeof v === 'string' || typeof v === 'number') params.set(k, String(v));
  }
  if (cursor.before) params.set('before', cursor.before);
  if (cursor.after) params.set('after', cursor.after);
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

/** "Newer" / "Older" links for a keyset page, plus "Newest" when the page is not the first. */
export function Pager(props: { label: string; path: string; query: Record<string, unknown>; olderCursor: string | null; newerCursor: string | null }) {
  const { olderCursor, newerCursor } = props;
  if (!olderCursor && !newerCursor) return '';
  return (
    <nav aria-label={props.label} class="pager">
      {newerCursor ? <a href={pageHref(props.path, props.query, {})}>Newest</a> : ''}
      {newerCursor ? <a href={pageHref(props.path, props.query, { after: newerCursor })}>Newer</a> : ''}
      {olderCursor ? <a href={pageHref(props.path, props.query, { before: olderCursor })}>Older</a> : ''}
    </nav>
  );
}

function Select(props: { id: string; name: string; label: string; options: readonly string[]; value?: string; any: string; labelOf?: (o: string) => string }) {
  return (
    <p>
      <label for={props.id} safe>
        {props.label}
      </label>
      <select id={props.id} name={props.name}>
        <option value="" safe>
          {props.any}
        </option>
        {props.options.map((o) => (
          <option value={o} selected={o === props.value} safe>
            {props.labelOf ? props.labelOf(o) : o}
          </option>
        ))}
      </select>
    </p>
  );
}

/** Leads and the activity ledger, with the API's filters as GET forms, a keyset page at a time. */
/** The filter form's Filter button and the link that clears every filter. */
function FilterActions(props: { clear: string }) {
  return (
    <p>
      <button type="submit">Filter</button> <a href={props.clear}>Clear</a>
    </p>
  );
}

export function leadsActivityPages(app: AppInstance, deps: ConsoleDeps) {
  const { leadDetail, activity } = deps.services;

  app.get<{ Querystring: Static<typeof ConsoleLeadsQuery> }>(
    '/console/leads',
    { schema: { hide: true, querystring: ConsoleLeadsQuery }, preValidation: dropEmptyFields },
    async (req, reply) => {
      const ctx = await pageContext(req, reply, deps.services.consoleSessions);
      const { before, after, ...q } = req.query;
      const limit = q.limit ?? 100;
      const result = await leadDetail.pageLeads(req.consoleSession!.auth.workspaceId, { ...q, limit }, { before, after });
      return sendPage(reply, ctx, {
        title: 'Leads',
        nav: 'leads',
        body: (
          <>
            <h1>Leads</h1>
            <p class="actions">
              <PrimaryLink href="/console/leads/import" label="Import or add leads" /> <a href="/console/leads/enroll">Enroll leads in a sequence</a>{' '}
              <a href="/console/leads/twins">Same person? Leads to merge</a>
            </p>
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
              <FilterActions clear="/console/leads" />
            </form>
            <p
              role="status"
              safe
            >{`${plural(result.count, 'lead')} ${result.count === 1 ? 'matches' : 'match'}; showing ${formatNumber(result.returned)}, newest first.`}</p>
            {result.returned === 0 ? (
              <EmptyState title="No lead on this page.">
                <p>
                  Clear or widen the filters, <a href="/console/leads/import">import leads from a CSV file</a>, or enroll X users through a Play.
                </p>
              </EmptyState>
            ) : (
              <Table
                caption="Leads, newest first"
                columns={['Person', 'Company', 'Stage', 'Next action', 'Replied', 'Last error']}
                items={result.leads}
                row={(l) => (
                  <tr>
                    <td>
                      <a href={`/console/leads/${l.id}`} safe>
                        {l.person ?? (l.username ? `@${l.username}` : 'Unnamed lead')}
                      </a>
                    </td>
                    <td safe>{l.company ?? '—'}</td>
                    <td>
                      <Badge value={l.stage} />
                    </td>
                    <td>
                      <When at={l.nextActionAt} />
                    </td>
                    <td>
                      <When at={l.repliedAt} />
                    </td>
                    <td safe>{l.lastError ?? ''}</td>
                  </tr>
                )}
              />
            )}
            <Pager label="Lead pages" path="/console/leads" query={req.query} olderCursor={result.olderCursor} newerCursor={result.newerCursor} />
          </>
        ),
      });
    },
  );

  app.get<{ Querystring: Static<typeof ConsoleActivityQuery> }>(
    '/console/activity',
    { schema: { hide: true, querystring: ConsoleActivityQuery }, preValidation: dropEmptyFields },
    async (req, reply) => {
      const ctx = await pageContext(req, reply, deps.services.consoleSessions);
      const { before, after, lead, ...q } = req.query;
      const result = await activity.pageActivity(req.consoleSession!.auth.workspaceId, { ...q, limit: q.limit ?? 100 }, { before, after, leadName: lead });
      return sendPage(reply, ctx, {
        title: 'Activity',
        nav: 'activity',
        body: (
          <>
            <h1>Activity</h1>
            <form method="get" action="/console/activity" class="filters" role="search" aria-label="Filter activity">
              <Select
                id="activity-action"
                name="action"
                label="Action"
                options={ACTIVITY_ACTIONS}
                value={q.action}
                any="Any action"
                labelOf={(o) => activityLabel(o)}
              />
              <Select id="activity-outcome" name="outcome" label="Outcome" options={ACTIVITY_OUTCOMES} value={q.outcome} any="Any outcome" />
              <p>
                <label for="activity-lead">Lead name</label>
                <input id="activity-lead" name="lead" type="search" value={lead ?? ''} maxlength="200" />
              </p>
              <p>
                <label for="activity-account">Account id</label>
                <input id="activity-account" name="account" type="text" value={q.account ?? ''} maxlength="100" />
              </p>
              <p>
                <label for="activity-since">Last N days</label>
                <input id="activity-since" name="sinceDays" type="number" min="1" max="365" value={q.sinceDays === undefined ? '' : String(q.sinceDays)} />
              </p>
              <FilterActions clear="/console/activity" />
            </form>
            <p
              role="status"
              safe
            >{`${formatNumber(result.count)} ${result.count === 1 ? 'entry matches' : 'entries match'}; showing ${formatNumber(result.returned)}, newest first.`}</p>
            {result.returned === 0 ? (
              <EmptyState title="No ledger entry on this page.">
                <p>Clear or widen the filters; entries appear as the engine and the reply decisions act.</p>
              </EmptyState>
            ) : (
              <ActivityTable caption="Ledger entries, newest first" entries={result.actions} />
            )}
            <Pager label="Activity pages" path="/console/activity" query={req.query} olderCursor={result.olderCursor} newerCursor={result.newerCursor} />
          </>
        ),
      });
    },
  );
}

type Entry = Awaited<ReturnType<ConsoleDeps['services']['activity']['pageActivity']>>['actions'][number];

/** Ledger entries as a table; the lead links to its page (the lead page passes `showLead: false`). */
export function ActivityTable(props: { caption: string; entries: Entry[]; showLead?: boolean }) {
  const showLead = props.showLead ?? true;
  return (
    <Table
      caption={props.caption}
      columns={showLead ? ['When', 'Action', 'Outcome', 'Lead', 'Account', 'Detail'] : ['When', 'Action', 'Outcome', 'Account', 'Detail']}
      items={props.entries}
      row={(a) => (
        <tr>
          <td>
            <When at={a.createdAt} />
          </td>
          <td>
            {/* The name in words; the API's action name (what `action=` filters by) small beside it. */}
            <span safe>{activityLabel(a.action, a.outcome, a.detail)}</span>{' '}
            <code class="muted action-code" safe>
              {a.action}
            </code>
          </td>
          <td>
            <Badge value={a.outcome} />
          </td>
          {showLead ? (
            <td>
              {a.lead.id ? (
                <a href={`/console/leads/${a.lead.id}`} safe>
                  {a.lead.person ?? 'Unnamed lead'}
                </a>
              ) : (
                '—'
              )}
            </td>
          ) : (
            ''
          )}
          <td safe>{a.account ?? '—'}</td>
          <td safe>{activityDetailText(a.action, a.detail)}</td>
        </tr>
      )}
    />
  );
}
