import { randomUUID } from 'node:crypto';
import { consoleBy } from '../by.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import { AppError, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import { DECISIONS, type Decision } from '../../modules/replies/index.js';
import type { ConsoleDeps } from '../deps.js';
import { CsrfField, PostButton } from '../layout.js';
import { pageContext, sendPage } from '../render.js';
import { Badge, EmptyState, NoticeBox, noticeTable, When, plural, type Notice } from '../ui.js';
import { MeetingBlock, MEETING_NOTICES, type MeetingLead } from './meeting-block.js';

/** Button names: the accessible name of each decision's button (issue 15 §3: "Send", "Dismiss", "Snooze", …). */
export const DECISION_LABELS: Record<Decision, string> = {
  send: 'Send',
  invite: 'Invite',
  booking_link: 'Send booking link',
  snooze: 'Snooze',
  start_sequence: 'Start sequence',
  meeting_booked: 'Meeting booked',
  dismiss: 'Dismiss',
  opt_out: 'Opt out',
};

/**
 * What `?notice=` may say on the replies page after a decision or Mark handled (POST/redirect/GET): a code from this
 * list, whose text is shown; an unknown code shows nothing, so a crafted link cannot put words in the console's mouth.
 */
export const REPLY_NOTICES = noticeTable({
  done: {
    send: 'Sent: the answer went out on the reply’s channel; the reply left the queue.',
    invite: 'Invite sent: the meeting invitation went out on the reply’s channel; the reply left the queue.',
    booking_link: 'Booking link sent on the reply’s channel; the reply left the queue.',
    task_created: 'Task created: send the answer yourself on LinkedIn from Tasks, then press Done. The reply left the queue.',
    snooze: 'Snoozed: the reply comes back to the queue when the snooze ends.',
    start_sequence: 'Follow-up sequence started for this lead; the reply left the queue.',
    meeting_booked: 'Meeting booked recorded; the reply left the queue.',
    dismiss: 'Dismissed: nobody was contacted; the reply left the queue.',
    opt_out: 'Opted out: the person gets nothing more from any sequence, permanently; the reply left the queue.',
    marked_handled: 'Marked handled: the reply left the queue. Nothing was sent from here.',
    already_decided: 'This reply was already handled or decided; nothing changed.',
    ...MEETING_NOTICES.done,
  },
  refused: {
    has_decisions: 'Not marked handled: this reply is answered with one of its decisions.',
    ...MEETING_NOTICES.refused,
  },
});

function replyNotice(query: unknown): Notice | null {
  const code = (query as Record<string, unknown> | undefined)?.notice;
  return typeof code === 'string' && Object.hasOwn(REPLY_NOTICES, code) ? REPLY_NOTICES[code as keyof typeof REPLY_NOTICES] : null;
}

/** Decisions that message the prospect: the console asks for confirmation before it runs them. */
const CONTACTS_PROSPECT: ReadonlySet<Decision> = new Set(['send', 'invite', 'booking_link']);

/** What a messaging decision's confirmation says leaves at the click (docs/console.md, "Account delivery"). */
const AT_THE_CLICK = {
  now: 'This messages the prospect now, through the reply’s channel. It cannot be undone.',
  task: 'This creates a task: nothing is sent from here. You send the answer yourself on LinkedIn from Tasks, then press Done.',
  simulated: 'This account is in the sandbox (simulated): nothing reaches the prospect.',
} as const;

/**
 * The confirmation button names the act the click does (docs/console.md "Replies"): "Create task" when nothing is
 * sent from here (Tasks mode), "Yes, send (simulated)" in the sandbox, else "Yes, send" / "Yes, invite"….
 */
export function confirmLabel(decision: Decision, atClick: keyof typeof AT_THE_CLICK): string {
  if (atClick === 'task') return 'Create task';
  const act = `Yes, ${DECISION_LABELS[decision].toLowerCase()}`;
  return atClick === 'simulated' ? `${act} (simulated)` : act;
}

const DecideForm = Type.Object(
  {
    _csrf: Type.Optional(Type.String()),
    decision: Type.Optional(Type.String()),
    text: Type.Optional(Type.String()),
    confirmed: Type.Optional(Type.String()),
    attempt: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
type DecideForm = { decision?: string; text?: string; confirmed?: string; attempt?: string };

type PendingReply = Awaited<ReturnType<ConsoleDeps['services']['replies']['listConsoleQueue']>>['replies'][number];

/**
 * Whether an X reply's "Open on X" link is a DM conversation held by a sandbox X account: the link
 * (channels/x/links.ts `xConversationUrl`, `https://x.com/messages/{low}-{high}`) names our account's user id and the
 * prospect's, and an X account never connected here (no tokens on record, `xConnect.connections`) is served by the
 * sandbox (channels/x/driver.ts), so that conversation exists nowhere on x.com. A profile link is not a conversation.
 */
export function isSandboxConversation(openOnX: string, realAccounts: ReadonlySet<string>): boolean {
  const m = /^https:\/\/x\.com\/messages\/(\d+)-(\d+)$/.exec(openOnX);
  return m !== null && !realAccounts.has(m[1]) && !realAccounts.has(m[2]);
}

function ReplyCard(props: { r: PendingReply; csrf: string; realXAccounts: ReadonlySet<string>; meeting: MeetingLead | undefined }) {
  const { r, csrf } = props;
  const allowed = 'allowedDecisions' in r ? r.allowedDecisions : [];
  const draft = 'draft' in r ? r.draft : null;
  const attempt = randomUUID();
  const heading = `${r.lead.person ?? 'Unknown person'}${r.lead.company ? `, ${r.lead.company}` : ''}`;
  return (
    <article class="reply" aria-labelledby={`reply-${r.id}`}>
      <h2 id={`reply-${r.id}`} safe>
        {heading}
      </h2>
      <p class="meta">
        <Badge value={r.channel} /> · <Badge value={r.classification} /> · replied <When at={r.repliedAt} />
        {r.snoozedUntil ? ' · back from snooze' : ''} ·{' '}
        <a href={`/console/leads/${r.lead.id}`} safe>
          {`Lead page of ${r.lead.person ?? 'this lead'}`}
        </a>
      </p>
      <h3>Their message</h3>
      <blockquote class="their-message" safe>
        {r.theirMessage ?? '(unreadable: written with another encryption key)'}
      </blockquote>
      {props.meeting ? <MeetingBlock lead={props.meeting} csrfToken={csrf} level={3} from="replies" who={heading} /> : ''}
      {allowed.length === 0 ? (
        <>
          <p>
            {r.openOnX && isSandboxConversation(r.openOnX, props.realXAccounts)
              ? 'This reply came through the sandbox (a simulated X account): there is nothing to answer on X; mark it handled here.'
              : 'This reply is answered on X itself: open the conversation, answer there, then mark it handled here.'}
          </p>
          <div class="actions">
            {r.openOnX && isSandboxConversation(r.openOnX, props.realXAccounts) ? (
              <span class="muted">Sandbox conversation: it exists only in the sandbox, not on x.com.</span>
            ) : r.openOnX ? (
              <a class="button" href={r.openOnX} rel="noopener noreferrer" target="_blank">
                Open on X<span class="visually-hidden" safe>{` (${heading}, opens in a new tab)`}</span>
              </a>
            ) : (
              <span class="muted">No X conversation is known for this lead.</span>
            )}
            <PostButton
              action={`/console/replies/${r.id}/mark-handled`}
              csrfToken={csrf}
              label="Mark handled"
              ariaLabel={`Mark handled: ${heading}`}
              variant="primary"
            />
          </div>
        </>
      ) : (
        <form method="post" action={`/console/replies/${r.id}/decide`}>
          <CsrfField token={csrf} />
          <input type="hidden" name="attempt" value={attempt} />
          {allowed.includes('send') ? (
            <p>
              <label for={`draft-${r.id}`}>Draft</label>
              <textarea id={`draft-${r.id}`} name="text" rows="6" safe>
                {draft ?? ''}
              </textarea>
            </p>
          ) : null}
          <p class="decisions">
            {allowed.map((d) => (
              <button type="submit" name="decision" value={d} safe>
                {DECISION_LABELS[d]}
              </button>
            ))}
          </p>
        </form>
      )}
    </article>
  );
}

/** The pending-reply queue and its decisions, through the same replies service as POST /replies/{id}/decide. */
export function repliesPages(app: AppInstance, deps: ConsoleDeps) {
  const replies = deps.services.replies;

  /** Each queued lead's meeting (booked, outcome, invitation answer) for its card's Meeting block, in one read. */
  const meetingsOf = (workspaceId: string, pending: PendingReply[]): Promise<Map<string, MeetingLead>> =>
    deps.services.meetings.meetingsOfLeads(
      workspaceId,
      pending.map((r) => r.lead.id),
    );

  app.get('/console/replies', { schema: { hide: true } }, async (req, reply) => {
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    const workspaceId = req.consoleSession!.auth.workspaceId;
    const { replies: pending } = await replies.listConsoleQueue(workspaceId, 100);
    // X accounts with tokens on record (connected, or disconnected later) are real; the others are the sandbox's.
    const realXAccounts = pending.some((r) => r.channel === 'x') ? new Set((await deps.services.xConnect.connections(workspaceId)).keys()) : new Set<string>();
    const meetings = await meetingsOf(workspaceId, pending);
    return sendPage(reply, ctx, {
      title: 'Replies',
      nav: 'replies',
      body: (
        <>
          <h1>Replies</h1>
          <NoticeBox notice={replyNotice(req.query)} />
          {pending.length === 0 ? (
            <EmptyState title="No reply is waiting for a decision.">
              <p>
                Replies appear here as prospects answer. Past replies and their decisions are on each <a href="/console/leads">lead page</a>.
              </p>
            </EmptyState>
          ) : (
            <p safe>{`${plural(pending.length, 'reply waits', 'replies wait')} for a decision, oldest first.`}</p>
          )}
          {pending.map((r) => (
            <ReplyCard r={r} csrf={ctx.csrfToken} realXAccounts={realXAccounts} meeting={meetings.get(r.lead.id)} />
          ))}
        </>
      ),
    });
  });

  /**
   * What a messaging decision on this reply does at the click: a real message (a gateway LinkedIn account, a real
   * mailbox or SMTP), a task (a LinkedIn account set to Tasks; Instagram outside the sandbox), or a simulation. Unknown
   * (the reply is past the queue's first page): said as a real message, the careful answer.
   */
  async function atTheClick(workspaceId: string, replyId: string): Promise<keyof typeof AT_THE_CLICK> {
    const r = (await replies.listConsoleQueue(workspaceId, 100)).replies.find((p) => p.id === replyId.toLowerCase());
    if (!r) return 'now';
    if (r.channel === 'email') return (await deps.services.mailboxes.list(workspaceId)).length > 0 || deps.config.smtpUrl ? 'now' : 'simulated';
    if (r.channel !== 'linkedin' && r.channel !== 'instagram') return 'now';
    const delivery = r.account
      ? await deps.services.linkedin.get(workspaceId, r.account).then(
          (v) => v.delivery,
          () => null,
        )
      : null;
    // Instagram has no real driver: outside the sandbox its answer is a person's task (domain/policy.ts).
    if (r.channel === 'instagram') return delivery && delivery !== 'sandbox' ? 'task' : 'simulated';
    return delivery === 'tasks' ? 'task' : delivery === 'gateway' ? 'now' : 'simulated';
  }

  async function refused(req: FastifyRequest, reply: FastifyReply, heading: string, message: string, status: number) {
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    return sendPage(reply, ctx, {
      title: heading,
      nav: 'replies',
      status,
      body: (
        <section class="error-page">
          <h1 safe>{heading}</h1>
          <p safe>{message}</p>
          <p>
            <a href="/console/replies">Back to the replies</a>
          </p>
        </section>
      ),
    });
  }

  app.post<{ Params: { id: string }; Body: DecideForm }>('/console/replies/:id/decide', { schema: { hide: true, body: DecideForm } }, async (req, reply) => {
    if (!isUuid(req.params.id)) throw notFound('reply');
    const decision = req.body.decision as Decision;
    if (!DECISIONS.includes(decision)) {
      return refused(req, reply, 'Request refused', `decision must be one of: ${DECISIONS.join(', ')}`, 400);
    }
    const text = decision === 'send' && typeof req.body.text === 'string' && req.body.text.trim() !== '' ? req.body.text : undefined;
    const auth = req.consoleSession!.auth;

    // A decision that messages the prospect is confirmed on a page of its own first.
    if (CONTACTS_PROSPECT.has(decision) && req.body.confirmed !== 'yes') {
      const atClick = await atTheClick(auth.workspaceId, req.params.id);
      const ctx = await pageContext(req, reply, deps.services.consoleSessions);
      return sendPage(reply, ctx, {
        title: `Confirm: ${DECISION_LABELS[decision]}`,
        nav: 'replies',
        body: (
          <section>
            <h1 safe>{`Confirm: ${DECISION_LABELS[decision]}`}</h1>
            <p>{AT_THE_CLICK[atClick]}</p>
            {text !== undefined ? (
              <>
                <h2>Message</h2>
                <blockquote class="their-message" safe>
                  {text}
                </blockquote>
              </>
            ) : null}
            <form method="post" action={`/console/replies/${req.params.id}/decide`}>
              <CsrfField token={ctx.csrfToken} />
              <input type="hidden" name="decision" value={decision} />
              <input type="hidden" name="confirmed" value="yes" />
              <input type="hidden" name="attempt" value={typeof req.body.attempt === 'string' ? req.body.attempt : randomUUID()} />
              {text !== undefined ? <input type="hidden" name="text" value={text} /> : null}
              <button type="submit" safe>
                {confirmLabel(decision, atClick)}
              </button>{' '}
              <a href="/console/replies">Cancel</a>
            </form>
          </section>
        ),
      });
    }

    try {
      // The form's attempt id is the Idempotency-Key: a double submit replays the first answer instead of acting twice.
      const key = typeof req.body.attempt === 'string' && /^[\x21-\x7e]{1,200}$/.test(req.body.attempt) ? `console:${req.body.attempt}` : undefined;
      const answer = await replies.decide(auth.workspaceId, req.params.id, { decision, text, by: consoleBy(auth) }, key);
      // On a LinkedIn account set to Tasks the answer is a task for a person, not a message (`taskId`).
      if (typeof answer.body.taskId === 'string') return reply.redirect('/console/replies?notice=task_created', 303);
    } catch (err) {
      if (err instanceof AppError && err.statusCode === 409) {
        return refused(req, reply, 'Already decided', `This reply was already decided (${err.code}); nothing was changed.`, 409);
      }
      throw err;
    }
    return reply.redirect(`/console/replies?notice=${decision}`, 303);
  });

  // Mark handled: the console's close of an X reply (answered on X itself); POST /replies/{id}/handled and the MCP tool
  // mark_reply_handled are the same service call. Recorded with who: `console:<key id>`.
  app.post<{ Params: { id: string } }>('/console/replies/:id/mark-handled', { schema: { hide: true } }, async (req, reply) => {
    if (!isUuid(req.params.id)) throw notFound('reply');
    let notice: keyof typeof REPLY_NOTICES;
    try {
      const result = await replies.markHandled(req.consoleSession!.auth.workspaceId, req.params.id, consoleBy(req.consoleSession!.auth));
      notice = result.outcome;
    } catch (err) {
      if (!(err instanceof AppError) || err.statusCode !== 409) throw err;
      notice = 'has_decisions';
    }
    return reply.redirect(`/console/replies?notice=${notice}`, 303);
  });
}
