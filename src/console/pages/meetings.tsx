import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import { AppError } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { BookingTool, EndpointView, EndpointWithSecret } from '../../modules/meetings/index.js';
import type { ConsoleDeps } from '../deps.js';
import { CsrfField, PostButton, Table } from '../layout.js';
import { pageContext, sendPage } from '../render.js';
import { Badge, EmptyState, NoticeBox, plural, redirectWithNotice, takeNotice, When, type Notice, type Tone } from '../ui.js';
import { renderAccountsPage } from './accounts.js';
import { bookingLinkPages, WorkspaceBookingLink } from './booking-links.js';
import { LeadLink, leadNames } from './mailbox-inbound.js';
import { SubscribeForm, SubscriptionCell, subscriptionPages } from './meetings-subscription.js';

// Settings → Meetings (issue 42 §1, docs/console.md "Meetings"): the workspace's booking-tool endpoints (create, rotate
// and remove; a secret is shown once, on the page that answers the create or the rotate), its booking link, and the
// booking events the tools pushed, newest first, filtered by status (unmatched ones first of all). Through the
// meetings service only.

export const TOOL_NAMES: Record<BookingTool, string> = { calendly: 'Calendly', cal: 'Cal.com' };
const toolName = (t: string) => (t === 'calendly' || t === 'cal' ? TOOL_NAMES[t] : t);
const EVENT_STATUSES = ['unmatched', 'applied', 'unchanged', 'ignored'] as const;
type EventStatus = (typeof EVENT_STATUSES)[number];
const STATUS_TONES: Record<EventStatus, Tone> = { applied: 'good', unchanged: 'neutral', unmatched: 'warn', ignored: 'neutral' };
const STATUS_MEANS: Record<EventStatus, string> = {
  applied: 'matched to a lead and applied',
  unchanged: 'matched; it was already so',
  unmatched: 'no lead matched: check the invitee’s address or the booking link used',
  ignored: 'an event this service does not act on',
};

/** Events per page. */
export const MEETING_EVENTS_PAGE = 50;
const MAX_LABEL = 100;

const MeetingsQuery = Type.Object(
  { status: Type.Optional(Type.String({ maxLength: 20 })), before: Type.Optional(Type.String({ maxLength: 100 })) },
  { additionalProperties: true },
);
const EndpointForm = Type.Object(
  { _csrf: Type.Optional(Type.String()), tool: Type.Optional(Type.String({ maxLength: 20 })), label: Type.Optional(Type.String()) },
  { additionalProperties: true },
);
type EndpointForm = { tool?: string; label?: string };
const EndpointParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

const statusOf = (v: string | undefined): EventStatus | undefined => (v && (EVENT_STATUSES as readonly string[]).includes(v) ? (v as EventStatus) : undefined);

/** An events cursor, `<received at ISO>~<event id>` (the last row of a page), or undefined when malformed. */
function cursorOf(v: string | undefined): { at: Date; id: string } | undefined {
  const [at, id] = (v ?? '').split('~');
  const when = new Date(at);
  return id && isUuid(id) && !Number.isNaN(when.getTime()) ? { at: when, id } : undefined;
}

const eventsUrl = (status: EventStatus | undefined, before?: string) => {
  const q = new URLSearchParams();
  if (status) q.set('status', status);
  if (before) q.set('before', before);
  const s = q.toString();
  return `/console/meetings${s ? `?${s}` : ''}#booking-events`;
};

/** The secret and the set-up steps of an endpoint just created or rotated: shown on this answer only. */
function SecretOnce(props: { endpoint: EndpointWithSecret }) {
  const e = props.endpoint;
  return (
    <>
      <p>
        <span safe>{`URL to give ${TOOL_NAMES[e.tool]}: `}</span>
        <code safe>{e.url}</code>
      </p>
      <p class="secret-once">
        Signing secret, shown only now: <code safe>{e.secret}</code>
      </p>
      <p safe>{`Copy it into ${TOOL_NAMES[e.tool]} now: this page never shows it again (rotate the endpoint for a new one).`}</p>
      <ol>
        {e.steps.map((s) => (
          <li safe>{s}</li>
        ))}
      </ol>
    </>
  );
}

function Endpoints(props: { endpoints: EndpointView[]; csrfToken: string }) {
  if (props.endpoints.length === 0) {
    return (
      <EmptyState title="No booking tool is connected yet.">
        <p>Create an endpoint below, then give its URL and secret to Calendly or Cal.com: bookings, cancellations and no-shows then reach the leads.</p>
      </EmptyState>
    );
  }
  return (
    <Table
      caption={`${plural(props.endpoints.length, 'endpoint')}, each verifying its tool’s signature with its own secret`}
      columns={['Tool', 'Label', 'URL', 'Created', 'Rotated', 'Calendly subscription', 'Actions']}
      items={props.endpoints}
      row={(e) => {
        const name = `${TOOL_NAMES[e.tool]}${e.label ? ` (${e.label})` : ''}`;
        return (
          <tr>
            <td>
              <Badge value={e.tool} label={TOOL_NAMES[e.tool]} tone="info" />
            </td>
            <td safe>{e.label ?? '—'}</td>
            <td class="id">
              <code safe>{e.url}</code>
            </td>
            <td>
              <When at={e.createdAt} />
            </td>
            <td>{e.rotatedAt ? <When at={e.rotatedAt} /> : <span class="muted">never</span>}</td>
            <td>
              <SubscriptionCell endpoint={e} csrfToken={props.csrfToken} />
            </td>
            <td>
              <div class="actions">
                <PostButton
                  action={`/console/meetings/endpoints/${e.id}/rotate`}
                  csrfToken={props.csrfToken}
                  label="Rotate"
                  ariaLabel={`Rotate the secret of ${name}`}
                  confirm={`Give ${name} a new secret? The old one stops verifying at once: events signed with it are refused until the tool has the new one.`}
                />
                <PostButton
                  action={`/console/meetings/endpoints/${e.id}/remove`}
                  csrfToken={props.csrfToken}
                  label="Remove"
                  ariaLabel={`Remove ${name}`}
                  variant="danger"
                  confirm={`Remove ${name}? Its URL stops answering at once; the events it received stay listed.`}
                />
              </div>
            </td>
          </tr>
        );
      }}
    />
  );
}

type EventRow = Awaited<ReturnType<ConsoleDeps['services']['meetings']['listEvents']>>[number];

function Events(props: { events: EventRow[]; names: Map<string, string>; status: EventStatus | undefined; before: string | undefined }) {
  const { events, status } = props;
  const last = events.length === MEETING_EVENTS_PAGE ? events[events.length - 1] : undefined;
  return (
    <section aria-labelledby="booking-events-heading" id="booking-events">
      <h2 id="booking-events-heading">Recent booking events</h2>
      <form method="get" action="/console/meetings#booking-events" class="filters" aria-label="Filter the booking events">
        <label for="events-status">Status</label>{' '}
        <select id="events-status" name="status">
          <option value="">All statuses</option>
          {EVENT_STATUSES.map((s) => (
            <option value={s} selected={s === status} safe>
              {s === 'unmatched' ? 'Unmatched' : s.charAt(0).toUpperCase() + s.slice(1)}
            </option>
          ))}
        </select>{' '}
        <button type="submit">Filter</button>{' '}
        {status !== 'unmatched' ? <a href={eventsUrl('unmatched')}>Only unmatched</a> : <a href={eventsUrl(undefined)}>All events</a>}
      </form>
      {events.length === 0 ? (
        <EmptyState title={status ? `No ${status} booking event${props.before ? ' on this page' : ''}.` : 'No booking event received yet.'}>
          <p>Each booking, reschedule, cancellation and no-show a connected tool sends is listed here, matched to its lead or not.</p>
        </EmptyState>
      ) : (
        <Table
          caption="Booking events, newest first"
          columns={['Status', 'Tool', 'Trigger', 'Invitee', 'Lead', 'Received']}
          items={events}
          row={(e) => {
            const s = statusOf(e.status);
            return (
              <tr>
                <td>
                  {s ? <Badge value={s} tone={STATUS_TONES[s]} /> : <Badge value={e.status} />}
                  {s ? <span class="visually-hidden" safe>{`: ${STATUS_MEANS[s]}`}</span> : ''}
                </td>
                <td safe>{toolName(e.tool)}</td>
                <td>
                  <code safe>{e.trigger}</code>
                </td>
                <td class="id" safe>
                  {e.invitee_email ?? '—'}
                </td>
                <td>
                  <LeadLink id={e.lead_id} names={props.names} context={`booking event ${e.trigger}`} />
                </td>
                <td>
                  <When at={e.received_at} />
                </td>
              </tr>
            );
          }}
        />
      )}
      <nav aria-label="Booking event pages" class="pager">
        {props.before ? <a href={eventsUrl(status)}>Newest</a> : ''}{' '}
        {last ? <a href={eventsUrl(status, `${last.received_at.toISOString()}~${last.id}`)}>Older events</a> : ''}
      </nav>
    </section>
  );
}

/** The Meetings page and its endpoint actions. */
export function meetingsPages(app: AppInstance, deps: ConsoleDeps) {
  const { meetings } = deps.services;

  async function render(
    req: FastifyRequest,
    reply: FastifyReply,
    notice: Notice | null,
    opts: { status?: number; endpoint?: EndpointWithSecret; form?: EndpointForm; query?: Static<typeof MeetingsQuery> } = {},
  ) {
    const workspaceId = req.consoleSession!.auth.workspaceId;
    const status = statusOf(opts.query?.status);
    const before = cursorOf(opts.query?.before);
    const [endpoints, events, bookingLinks] = await Promise.all([
      meetings.listEndpoints(workspaceId),
      meetings.listEvents(workspaceId, { ...(status && { status }), limit: MEETING_EVENTS_PAGE, ...(before && { before }) }),
      meetings.getBookingLinks(workspaceId),
    ]);
    const names = await leadNames(
      deps.services,
      workspaceId,
      events.map((e) => e.lead_id),
    );
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    const tool = opts.form?.tool === 'cal' ? 'cal' : 'calendly';
    return sendPage(reply, ctx, {
      title: 'Meetings',
      nav: 'meetings',
      status: opts.status,
      body: (
        <>
          <h1>Meetings</h1>
          <p class="meta">
            Booking tools tell this service when a lead books, moves, cancels or misses a meeting (docs/meetings.md). Outcomes are recorded on each lead’s page.
          </p>
          <NoticeBox notice={notice}>{opts.endpoint ? <SecretOnce endpoint={opts.endpoint} /> : ''}</NoticeBox>
          <section aria-labelledby="endpoints">
            <h2 id="endpoints">Booking-tool endpoints</h2>
            <Endpoints endpoints={endpoints} csrfToken={ctx.csrfToken} />
          </section>
          <section aria-labelledby="new-endpoint">
            <h2 id="new-endpoint">Connect a booking tool</h2>
            <form method="post" action="/console/meetings/endpoints">
              <CsrfField token={ctx.csrfToken} />
              <p>
                <label for="endpoint-tool">Tool</label>{' '}
                <select id="endpoint-tool" name="tool">
                  <option value="calendly" selected={tool === 'calendly'}>
                    Calendly
                  </option>
                  <option value="cal" selected={tool === 'cal'}>
                    Cal.com (cloud or self-hosted)
                  </option>
                </select>
              </p>
              <p>
                <label for="endpoint-label">Label (optional)</label>{' '}
                <input
                  id="endpoint-label"
                  name="label"
                  maxlength={String(MAX_LABEL)}
                  autocomplete="off"
                  placeholder="Sales team"
                  value={opts.form?.label ?? ''}
                />
              </p>
              <p>
                <button type="submit" class="primary">
                  Create endpoint
                </button>
              </p>
            </form>
          </section>
          <SubscribeForm endpoints={endpoints} csrfToken={ctx.csrfToken} />
          <WorkspaceBookingLink links={bookingLinks} csrfToken={ctx.csrfToken} />
          <Events events={events} names={names} status={status} before={before ? opts.query?.before : undefined} />
        </>
      ),
    });
  }

  app.get<{ Querystring: Static<typeof MeetingsQuery> }>('/console/meetings', { schema: { hide: true, querystring: MeetingsQuery } }, async (req, reply) =>
    render(req, reply, takeNotice(req, reply), { query: req.query }),
  );

  app.post<{ Body: EndpointForm }>('/console/meetings/endpoints', { schema: { hide: true, body: EndpointForm } }, async (req, reply) => {
    const tool = req.body.tool;
    const label = req.body.label?.trim() ?? '';
    if (tool !== 'calendly' && tool !== 'cal')
      return render(req, reply, { kind: 'refused', text: 'Choose Calendly or Cal.com.' }, { status: 400, form: req.body });
    if (label.length > MAX_LABEL)
      return render(req, reply, { kind: 'refused', text: `The label is longer than ${MAX_LABEL} characters.` }, { status: 400, form: req.body });
    const endpoint = await meetings.createEndpoint(req.consoleSession!.auth.workspaceId, { tool, label: label || null });
    return render(req, reply, { kind: 'done', text: `Created a ${TOOL_NAMES[tool]} endpoint.` }, { endpoint });
  });

  app.post<{ Params: { id: string } }>(
    '/console/meetings/endpoints/:id/rotate',
    { schema: { hide: true, params: EndpointParams, body: EndpointForm } },
    async (req, reply) => {
      const endpoint = await meetings.rotateEndpoint(req.consoleSession!.auth.workspaceId, req.params.id); // 404 page for a foreign id
      return render(
        req,
        reply,
        { kind: 'done', text: `New secret for the ${TOOL_NAMES[endpoint.tool]} endpoint: the old one no longer verifies.` },
        { endpoint },
      );
    },
  );

  app.post<{ Params: { id: string } }>(
    '/console/meetings/endpoints/:id/remove',
    { schema: { hide: true, params: EndpointParams, body: EndpointForm } },
    async (req, reply) => {
      let removed;
      try {
        removed = await meetings.removeEndpoint(req.consoleSession!.auth.workspaceId, req.params.id); // 404 page for a foreign id
      } catch (err) {
        if (err instanceof AppError && err.statusCode === 503) return render(req, reply, { kind: 'refused', text: `${err.message}.` }, { status: 503 });
        throw err;
      }
      const left = removed.subscription === 'left_at_calendly' ? ' Calendly refused the stored token: delete its subscription at Calendly.' : '';
      const gone = removed.subscription === 'deleted' ? ' Its Calendly subscription is deleted.' : '';
      return redirectWithNotice(reply, '/console/meetings', {
        kind: left ? 'refused' : 'done',
        text: `Endpoint removed: its URL no longer answers.${gone}${left}`,
      });
    },
  );

  subscriptionPages(app, deps, (req, reply, notice, status) => render(req, reply, notice, { status }));
  bookingLinkPages(app, deps, {
    meetings: (req, reply, notice, status) => render(req, reply, notice, { status }),
    accounts: (req, reply, notice, status) => renderAccountsPage(deps, req, reply, notice, status),
  });
}
