import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import { AppError, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import { DECISIONS, type Decision } from '../../modules/replies/index.js';
import type { ConsoleDeps } from '../plugin.js';
import { CsrfField } from '../layout.js';
import { pageContext, sendPage } from '../render.js';

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

/** Decisions that message the prospect: the console asks for confirmation before it runs them. */
const CONTACTS_PROSPECT: ReadonlySet<Decision> = new Set(['send', 'invite', 'booking_link']);

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

type PendingReply = Awaited<ReturnType<ConsoleDeps['services']['replies']['listPending']>>['replies'][number];

function ReplyCard(props: { r: PendingReply; csrf: string }) {
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
        <span safe>{r.channel}</span> · <span safe>{r.classification}</span> · replied{' '}
        <time datetime={r.repliedAt} safe>
          {r.repliedAt.slice(0, 16).replace('T', ' ')}
        </time>
        {r.snoozedUntil ? ' · back from snooze' : ''}
      </p>
      <h3>Their message</h3>
      <blockquote class="their-message" safe>
        {r.theirMessage ?? '(unreadable: written with another encryption key)'}
      </blockquote>
      {allowed.length === 0 ? (
        <p>This reply is answered in the channel itself (no decision here).</p>
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

  app.get('/console/replies', { schema: { hide: true } }, async (req, reply) => {
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    const { replies: pending } = await replies.listPending(req.consoleSession!.auth.workspaceId, 100);
    return sendPage(reply, ctx, {
      title: 'Replies',
      nav: 'replies',
      body: (
        <>
          <h1>Replies</h1>
          <p safe>
            {pending.length === 0
              ? 'No reply is waiting for a decision.'
              : `${pending.length} ${pending.length === 1 ? 'reply waits' : 'replies wait'} for a decision, oldest first.`}
          </p>
          {pending.map((r) => (
            <ReplyCard r={r} csrf={ctx.csrfToken} />
          ))}
        </>
      ),
    });
  });

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
      const ctx = await pageContext(req, reply, deps.services.consoleSessions);
      return sendPage(reply, ctx, {
        title: `Confirm: ${DECISION_LABELS[decision]}`,
        nav: 'replies',
        body: (
          <section>
            <h1 safe>{`Confirm: ${DECISION_LABELS[decision]}`}</h1>
            <p>This messages the prospect now, through the reply's channel. It cannot be undone.</p>
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
              <button type="submit" safe>{`Yes, ${DECISION_LABELS[decision].toLowerCase()}`}</button> <a href="/console/replies">Cancel</a>
            </form>
          </section>
        ),
      });
    }

    try {
      // The form's attempt id is the Idempotency-Key: a double submit replays the first answer instead of acting twice.
      const key = typeof req.body.attempt === 'string' && /^[\x21-\x7e]{1,200}$/.test(req.body.attempt) ? `console:${req.body.attempt}` : undefined;
      await replies.decide(auth.workspaceId, req.params.id, { decision, text, by: 'console' }, key);
    } catch (err) {
      if (err instanceof AppError && err.statusCode === 409) {
        return refused(req, reply, 'Already decided', `This reply was already decided (${err.code}); nothing was changed.`, 409);
      }
      throw err;
    }
    return reply.redirect('/console/replies', 303);
  });
}
