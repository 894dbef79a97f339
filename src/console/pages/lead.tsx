import { LeadPath } from './sequence-branches.js';
import { Type, type Static } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import { Uuid } from '../../app/schemas.js';
import type { LeadDetail } from '../../modules/leads/index.js';
import type { ConsoleDeps } from '../deps.js';
import { PostButton, Table } from '../layout.js';
import { pageContext, sendPage } from '../render.js';
import { Badge, EmptyState, NoticeBox, noticeTable, When, plural, type Notice } from '../ui.js';
import { ActivityTable, Pager } from './leads-activity.js';
import { HeldReason } from '../held.js';
import { CHANNEL_NAMES } from '../../domain/vocabulary.js';
import { xProfileUrl } from '../../channels/x/index.js';
import { MeetingBlock, MEETING_NOTICES } from './meeting-block.js';

/**
 * What `?notice=` may say on a lead page (after Stop sequence or Opt out, POST/redirect/GET): a code from this list,
 * whose text is shown; an unknown code shows nothing. The URL never carries text, so a crafted link cannot make the
 * console say something of its own (the review page's rule, docs/console.md).
 */
export const LEAD_NOTICES = noticeTable({
  done: {
    stopped: 'Sequence stopped: nothing more is sent to this lead. Its history is kept; it may be enrolled again later.',
    already_stopped: 'The sequence was already stopped for this lead; nothing changed.',
    opted_out: 'Opted out: this person gets nothing more from any sequence of this workspace, permanently.',
    already_opted_out: 'This person was already opted out; nothing changed.',
    ...MEETING_NOTICES.done,
  },
  refused: MEETING_NOTICES.refused,
});

export function noticeOf(list: Record<string, Notice>, query: unknown): Notice | null {
  const code = (query as Record<string, unknown> | undefined)?.notice;
  return typeof code === 'string' && Object.hasOwn(list, code) ? list[code] : null;
}

const LeadPageQuery = Type.Object(
  {
    before: Type.Optional(Uuid({ description: 'ledger entries older than this one' })),
    after: Type.Optional(Uuid({ description: 'ledger entries newer than this one' })),
    notice: Type.Optional(Type.String({ maxLength: 50 })),
  },
  { additionalProperties: true },
);

const TIMELINE_PAGE = 50;
const REPLY_CHANNEL_NAMES: Record<string, string> = { ...CHANNEL_NAMES, sandbox: 'the sandbox' };

/** Only web addresses become links: a stored `javascript:` URL must never be clickable. */
const webLink = (url: string | null) => (url && /^https?:\/\//i.test(url) ? url : null);

export const leadName = (lead: Pick<LeadDetail, 'person' | 'lanes'>) =>
  lead.person ?? (lead.lanes.x?.username ? `@${lead.lanes.x.username}` : (lead.lanes.email ?? 'Unnamed lead'));

function Lanes(props: { lead: LeadDetail }) {
  const { lanes } = props.lead;
  const rows: JSX.Element[] = [];
  if (lanes.email) {
    rows.push(
      <tr>
        <th scope="row">E-mail</th>
        <td safe>{lanes.email}</td>
      </tr>,
    );
  }
  if (lanes.linkedinUrl) {
    const href = webLink(lanes.linkedinUrl);
    rows.push(
      <tr>
        <th scope="row">LinkedIn</th>
        <td>
          {href ? (
            <a href={href} rel="noopener noreferrer" safe>
              {lanes.linkedinUrl}
            </a>
          ) : (
            <span safe>{lanes.linkedinUrl}</span>
          )}
        </td>
      </tr>,
    );
  }
  if (lanes.x) {
    const href = xProfileUrl({ username: lanes.x.username, x_user_id: lanes.x.userId });
    const label = lanes.x.username ? `@${lanes.x.username}` : `user ${lanes.x.userId}`;
    rows.push(
      <tr>
        <th scope="row">X</th>
        <td>
          {href ? (
            <a href={href} rel="noopener noreferrer" safe>
              {label}
            </a>
          ) : (
            <span safe>{label}</span>
          )}
        </td>
      </tr>,
    );
  }
  if (rows.length === 0) return <EmptyState title="This lead has no lane: no e-mail address, LinkedIn profile or X user." />;
  return (
    <Table caption="Where this lead is reached" columns={['Channel', 'Address']}>
      {rows}
    </Table>
  );
}

/** The lead's stage, with opted-out and meeting-booked beside it when they apply. */
function StageBadges(props: { lead: LeadDetail }) {
  const { lead } = props;
  return (
    <>
      <Badge value={lead.stage} />
      {lead.optedOutAt ? (
        <>
          {' '}
          <Badge value="opted_out" />
        </>
      ) : (
        ''
      )}
      {lead.meetingBookedAt ? (
        <>
          {' '}
          <Badge value="meeting_booked" />
        </>
      ) : (
        ''
      )}
    </>
  );
}

/** A lead's custom fields as the merge tags a template writes (`{{custom.name}}`) with their values; 'None' when empty. */
function CustomFields(props: { custom: LeadDetail['custom'] }) {
  const entries = Object.entries(props.custom);
  if (entries.length === 0) return <>None</>;
  return (
    <ul>
      {entries.map(([name, value]) => (
        <li>
          <code safe>{`{{custom.${name}}}`}</code> <span safe>{value}</span>
        </li>
      ))}
    </ul>
  );
}

function Run(props: { lead: LeadDetail }) {
  const { lead } = props;
  const account = [lead.accountName, lead.mailboxAddress, lead.xAccount ? `@${lead.xAccount.handle ?? lead.xAccount.userId}` : null].filter(
    (a): a is string => !!a,
  );
  return (
    <Table caption="Where this lead stands">
      <tr>
        <th scope="row">Stage</th>
        <td>
          <StageBadges lead={lead} />
        </td>
      </tr>
      <tr>
        <th scope="row">Sequence</th>
        <td>
          {lead.sequenceId ? (
            <a href={`/console/sequences/${lead.sequenceId}`} safe>
              {lead.sequenceName ?? lead.sequenceId}
            </a>
          ) : (
            'None'
          )}
          <span safe>{lead.sequenceDone ? ' (stopped or done)' : ` (step ${lead.currentStep + 1})`}</span>
        </td>
      </tr>
      <tr>
        <th scope="row">Next action</th>
        <td>
          <When at={lead.nextActionAt} />
        </td>
      </tr>
      {lead.heldBy ? (
        <tr>
          <th scope="row">Held</th>
          <td>
            <HeldReason held={lead.heldBy} sequenceId={lead.sequenceId} />
          </td>
        </tr>
      ) : (
        ''
      )}
      <tr>
        <th scope="row">Account</th>
        <td safe>
          {account.length > 0
            ? account.join(', ')
            : (lead.account ?? "None: e-mail goes out from the workspace's mailboxes; a LinkedIn or X step from the workspace's only account of that channel")}
        </td>
      </tr>
      <tr>
        <th scope="row">Time zone</th>
        <td safe>
          {lead.timeZone
            ? `${lead.timeZone} (a sequence that sends in each lead's own hours sends in this zone's hours)`
            : "Not known (the account's hours are used)"}
        </td>
      </tr>
      <tr>
        <th scope="row">Custom fields</th>
        <td>
          <CustomFields custom={lead.custom} />
        </td>
      </tr>
      <tr>
        <th scope="row">Replied</th>
        <td>
          <When at={lead.repliedAt} />
        </td>
      </tr>
      {lead.lastError ? (
        <tr>
          <th scope="row">Last error</th>
          <td safe>{lead.lastError}</td>
        </tr>
      ) : (
        ''
      )}
    </Table>
  );
}

type LeadReply = Awaited<ReturnType<ConsoleDeps['services']['replies']['listForLead']>>[number];

function Replies(props: { replies: LeadReply[] }) {
  if (props.replies.length === 0) return <EmptyState title="No reply from this lead yet." />;
  return (
    <>
      {props.replies.map((r) => (
        <article class="reply" aria-labelledby={`lead-reply-${r.id}`}>
          <h3 id={`lead-reply-${r.id}`} safe>
            {`Reply on ${REPLY_CHANNEL_NAMES[r.channel] ?? r.channel}`}
          </h3>
          <p class="meta">
            <When at={r.repliedAt} /> · <Badge value={r.classification} /> · <Badge value={r.state} />
            {r.decision ? (
              <>
                {' '}
                · <span safe>{`decided ${r.decision} by ${r.decidedBy ?? 'unknown'}`}</span>
              </>
            ) : (
              ''
            )}
          </p>
          <blockquote class="their-message" safe>
            {r.theirMessage ?? '(unreadable: written with another encryption key)'}
          </blockquote>
          {r.state === 'decided' ? '' : <a href="/console/replies">Decide in the reply queue</a>}
        </article>
      ))}
    </>
  );
}

type LeadTwinsView = Awaited<ReturnType<ConsoleDeps['services']['leads']['twinsOfLead']>>;

/** Other leads that look like the same person (docs/sequences-and-leads.md "Two leads, one person"), and decisions on them. */
function Twins(props: { twins: LeadTwinsView; leadId: string }) {
  const { open, decisions } = props.twins;
  if (open === 0 && decisions.length === 0) return '';
  return (
    <p class="meta">
      {open > 0 ? (
        <>
          <span safe>{`This lead looks like the same person as ${plural(open, 'other lead')}. `}</span>
          <a href="/console/leads/twins">Same person? Merge or tell them apart</a>
          {decisions.length > 0 ? ' · ' : ''}
        </>
      ) : (
        ''
      )}
      {decisions.slice(0, 3).map((d, i) => (
        <>
          {i > 0 ? ' · ' : ''}
          <span safe>{d.decision === 'merged' ? (d.survivorId === props.leadId ? 'Kept in a merge with ' : 'Merged into ') : 'Not the same person as '}</span>
          <a href={`/console/leads/${d.decision === 'merged' && d.survivorId !== props.leadId ? d.survivorId : d.otherLeadId}`}>
            {d.decision === 'merged' && d.survivorId !== props.leadId ? 'the lead kept' : 'another lead'}
          </a>
          <span safe>{` (by ${d.decidedBy})`}</span>
        </>
      ))}
    </p>
  );
}

/** One lead: its lanes, stage, sequence and account, replies and ledger; Stop sequence and Opt out (issue 27 §4). */
export function leadPages(app: AppInstance, deps: ConsoleDeps) {
  const { leadDetail, activity, replies, xLeads } = deps.services;

  app.get<{ Params: { id: string }; Querystring: Static<typeof LeadPageQuery> }>(
    '/console/leads/:id',
    { schema: { hide: true, querystring: LeadPageQuery } },
    async (req, reply) => {
      const workspaceId = req.consoleSession!.auth.workspaceId;
      const lead = await leadDetail.getLead(workspaceId, req.params.id); // 404 page for an unknown or foreign id
      const { before, after } = req.query;
      const [timeline, leadReplies, twins, path] = await Promise.all([
        activity.pageActivity(workspaceId, { limit: TIMELINE_PAGE }, { leadId: lead.id, before, after }),
        replies.listForLead(workspaceId, lead.id),
        deps.services.leads.twinsOfLead(workspaceId, lead.id),
        deps.services.leads.leadPath(workspaceId, { id: lead.id, sequenceId: lead.sequenceId }),
      ]);
      const ctx = await pageContext(req, reply, deps.services.consoleSessions);
      const name = leadName(lead);
      const stoppable = !lead.sequenceDone || lead.nextActionAt !== null;
      return sendPage(reply, ctx, {
        title: name,
        nav: 'leads',
        body: (
          <>
            <p>
              <a href="/console/leads">All leads</a>
            </p>
            <h1 safe>{name}</h1>
            <p class="meta" safe>
              {[lead.title, lead.company].filter(Boolean).join(', ') || 'No title or company known'}
            </p>
            <NoticeBox notice={noticeOf(LEAD_NOTICES, req.query)} />
            <Twins twins={twins} leadId={lead.id} />
            <div class="actions">
              {stoppable ? (
                <PostButton
                  action={`/console/leads/${lead.id}/stop`}
                  csrfToken={ctx.csrfToken}
                  label="Stop sequence"
                  ariaLabel="Stop sequence"
                  confirm={`Stop the sequence for ${name}? Nothing more is sent; the history is kept.`}
                />
              ) : (
                <span class="muted">Sequence stopped or done.</span>
              )}
              {lead.optedOutAt ? (
                <span class="muted">
                  Opted out <When at={lead.optedOutAt} />.
                </span>
              ) : (
                <PostButton
                  action={`/console/leads/${lead.id}/opt-out`}
                  csrfToken={ctx.csrfToken}
                  label="Opt out"
                  ariaLabel="Opt out"
                  variant="danger"
                  confirm={`Opt ${name} out permanently? Every lane of this person stops and is never contacted again.`}
                />
              )}
            </div>
            <h2>Lanes</h2>
            <Lanes lead={lead} />
            <h2>Stage, sequence and account</h2>
            <Run lead={lead} />
            <LeadPath path={path} />
            <MeetingBlock lead={lead} csrfToken={ctx.csrfToken} level={2} from="lead" />
            <h2>Replies</h2>
            <Replies replies={leadReplies} />
            <h2>Activity</h2>
            <p role="status" safe>{`${plural(timeline.count, 'ledger entry', 'ledger entries')} for this lead, newest first.`}</p>
            {timeline.returned === 0 ? (
              <EmptyState title="No ledger entry on this page." />
            ) : (
              <ActivityTable caption="This lead's ledger entries, newest first" entries={timeline.actions} showLead={false} />
            )}
            <Pager label="Activity pages" path={`/console/leads/${lead.id}`} query={{}} olderCursor={timeline.olderCursor} newerCursor={timeline.newerCursor} />
          </>
        ),
      });
    },
  );

  // Stop sequence: the one lead stop (the x-leads service's, POST /x/leads/{id}/stop), which stops every lane of the
  // lead's X identity and only this lead otherwise, writing one manual_override entry per lane it changed.
  app.post<{ Params: { id: string } }>('/console/leads/:id/stop', { schema: { hide: true } }, async (req, reply) => {
    const workspaceId = req.consoleSession!.auth.workspaceId;
    const before = await leadDetail.getLead(workspaceId, req.params.id);
    await xLeads.stopLead(workspaceId, before.id);
    const notice = before.sequenceDone && before.nextActionAt === null ? 'already_stopped' : 'stopped';
    return reply.redirect(`/console/leads/${before.id}?notice=${notice}`, 303);
  });

  app.post<{ Params: { id: string } }>('/console/leads/:id/opt-out', { schema: { hide: true } }, async (req, reply) => {
    const workspaceId = req.consoleSession!.auth.workspaceId;
    const result = await leadDetail.optOut(workspaceId, req.params.id, 'console');
    return reply.redirect(`/console/leads/${req.params.id.toLowerCase()}?notice=${result.outcome}`, 303);
  });
}
