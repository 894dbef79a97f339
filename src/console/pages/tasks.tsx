import type { FastifyReply, FastifyRequest } from 'fastify';
import { consoleBy } from '../by.js';
import { Type } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import { AppError, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { TaskView } from '../../modules/tasks/index.js';
import type { ConsoleDeps } from '../deps.js';
import { CsrfField } from '../layout.js';
import { pageContext, sendFragment, sendPage } from '../render.js';
import { Badge, EmptyState, humanize, NoticeBox, noticeTable, plural, redirectWithNotice, takeNotice, When, type Notice } from '../ui.js';

// The task queue (issue 28 §2, docs/console.md "Tasks"): what a person must do because a platform's rules keep it
// from automation. An X task is performed here, at the click, through the X API (tasks.performAtClick); a LinkedIn or
// Instagram task is done on the platform by the person, who then presses Done (tasks.complete) or Skip. An uncertain
// send (a crash left it in flight, nobody can confirm it) is answered Send anyway (e-mail only: sent again at the click,
// a fresh Message-ID), Mark as sent or Leave it (docs/tasks.md "Uncertain sends").

/** Tasks per page: one keyset page of the service's list, soonest due first. */
export const TASKS_PAGE_SIZE = 50;

/** Who closes a task from the console (the ledger's `detail.by`): keys have no label, so the console's name. */

/**
 * What a task action may say after it (POST/redirect/GET, or in place with htmx): a fixed code and its text. The
 * text travels in the one-time notice cookie, never the URL, and never carries a provider's own words.
 */
export const TASK_NOTICES = noticeTable({
  done: {
    done: 'Done: recorded as the step, and the sequence goes on.',
    skipped: 'Skipped: nothing was sent, and the sequence goes on.',
    sent_dm: 'Sent: the DM went to X, and the task left the queue.',
    engaged: 'Done on X: the task left the queue.',
    marked_sent: 'Marked as sent: recorded as the person’s word, and the task left the queue.',
    sent_anyway: 'Sent again with a fresh Message-ID: recorded as the person’s decision.',
    left: 'Left as it was: the step stays recorded as uncertain, and the task left the queue.',
  },
  refused: {
    task_closed: 'This task is no longer open (done, skipped or cancelled elsewhere); nothing changed.',
    x_rate_limited: 'X is rate limiting this account right now. Nothing was sent; the task stays open, try again later.',
    x_refused: 'X did not take it. Nothing was recorded; the task stays open.',
    not_performable: 'This is not done from here: open the profile, do it on the platform, then press Done.',
    send_failed: 'The mail server refused it for good: recorded as failed, and the task left the queue.',
    send_later: 'The e-mail did not go this time. Nothing was recorded; the task stays open, try again later.',
    not_sendable: 'Only an uncertain e-mail can be sent again; mark it as sent or leave it.',
  },
});
type TaskNotice = keyof typeof TASK_NOTICES;

const KIND_LABELS: Record<string, string> = {
  x_dm: 'X DM',
  x_engage: 'X follow or like',
  connect: 'LinkedIn invitation',
  message: 'LinkedIn message',
  engage: 'LinkedIn engagement',
  instagram_dm: 'Instagram DM',
  email: 'E-mail',
  reply: 'Answer to a reply',
};
const KINDS = Object.keys(KIND_LABELS);

const REASONS: Record<string, string> = {
  x_dm_not_invited: 'X allows automated DMs only to people who wrote to the account first.',
  x_engage_by_person: 'X allows follows and likes only from the person who owns the account.',
  linkedin_tasks: 'This LinkedIn account is set to Tasks.',
  linkedin_engage_by_person: 'Likes, comments and endorsements are never sent through the gateway.',
  instagram_no_cold_dm: 'Instagram allows no DM the person did not start.',
  uncertain_delivery: 'A crash interrupted this send and nobody can tell whether it arrived; the sequence went on without it.',
};

const actionTypes = (t: TaskView) => t.actions.map((a) => (a?.type ?? '').toLowerCase());

/** The X button's name, after what the click does (the X driver's engage: a follow, then likes). */
export function xButtonLabel(t: TaskView): 'Send DM' | 'Follow' | 'Like' | 'Follow and like' {
  if (t.kind === 'x_dm') return 'Send DM';
  const types = actionTypes(t);
  const follow = types.some((a) => a.startsWith('follow'));
  const like = types.some((a) => !a.startsWith('follow'));
  return follow && like ? 'Follow and like' : follow ? 'Follow' : 'Like';
}

/** What the person does, in words. */
function whatToDo(t: TaskView): string {
  if (t.source === 'uncertain')
    return t.channel === 'email'
      ? 'Did this e-mail arrive? Send it anyway, mark it as sent, or leave it.'
      : `Did this ${KIND_LABELS[t.kind] ?? humanize(t.kind)} reach them? Check on the platform, then mark it as sent or leave it.`;
  switch (t.kind) {
    case 'x_dm':
      return 'Send this DM on X.';
    case 'x_engage':
      return `${xButtonLabel(t)} on X.`;
    case 'connect':
      return t.text ? 'Send a LinkedIn invitation with this note.' : 'Send a LinkedIn invitation.';
    case 'message':
      return 'Send this LinkedIn message.';
    case 'engage':
      return `On LinkedIn: ${actionTypes(t).map(humanize).join(', ') || 'engage with their profile'}.`;
    case 'instagram_dm':
      return 'Send this Instagram DM.';
    case 'reply':
      return t.decision === 'invite'
        ? 'Answer their reply with the meeting invitation.'
        : t.decision === 'booking_link'
          ? 'Answer their reply with the booking link.'
          : 'Answer their reply with this message.';
    default:
      return humanize(t.action);
  }
}

const MODE_LABELS: Record<string, string> = { linkedin: 'LinkedIn', email: 'e-mail', instagram: 'Instagram' };

/**
 * An account's name with its channel, once: "Dana (LinkedIn)". A name that already says its channel (the demo world
 * and many people name accounts "Dana (LinkedIn)") is kept as it is, never "Dana (LinkedIn) (LinkedIn)".
 */
export function accountLabel(name: string, channel: string): string {
  const suffix = `(${channel})`;
  return name.trim().toLowerCase().endsWith(suffix.toLowerCase()) ? name.trim() : `${name} ${suffix}`;
}

/**
 * The open-task count line; `oob` marks it for htmx's out-of-band swap, so a Done or Skip answered in place redraws
 * the count with the card (docs/console.md "Tasks").
 */
function TaskCount(props: { total: number; oob?: boolean }) {
  return (
    <p id="tasks-count" role="status" hx-swap-oob={props.oob ? 'true' : undefined} safe>
      {`${plural(props.total, 'open task')} in the workspace, soonest due first.`}
    </p>
  );
}

const personOf = (t: TaskView) => `${t.lead.person ?? 'Unknown person'}${t.lead.company ? `, ${t.lead.company}` : ''}`;

/** The account a task is grouped under: its messaging account, or its X account. */
const groupKeyOf = (t: TaskView) => t.account ?? t.xAccount ?? '';

function TaskButtons(props: { t: TaskView; csrf: string; engageApi: boolean }) {
  const { t, csrf } = props;
  const who = personOf(t);
  const form = (path: string, label: string, action: string, variant?: string) => (
    <form
      method="post"
      action={`/console/tasks/${t.id}/${path}`}
      hx-post={`/console/tasks/${t.id}/${path}`}
      hx-target="closest article"
      hx-swap="outerHTML"
      class="inline"
    >
      <CsrfField token={csrf} />
      <button type="submit" class={variant} data-action={action}>
        <span safe>{label}</span>
        <span class="visually-hidden" safe>{` for ${who}`}</span>
      </button>
    </form>
  );
  // An uncertain send: Mark as sent is the main button (the keyboard's d); Send anyway contacts the person again, so no
  // key presses it; Leave it is the skip.
  if (t.source === 'uncertain')
    return (
      <div class="actions">
        {t.channel === 'email' ? form('send-anyway', 'Send anyway', 'send-anyway') : ''}
        {form('mark-sent', 'Mark as sent', 'done', 'primary')}
        {form('skip', 'Leave it', 'skip')}
      </div>
    );
  // An X task is performed by its button (never marked Done by hand: the click is what acts); Skip moves its sequence on.
  // A follow or like on an app tier without those endpoints (OUTREACH_X_ENGAGE_API off) is done on X, like a LinkedIn task.
  if (t.channel === 'x' && (t.kind !== 'x_engage' || props.engageApi))
    return (
      <div class="actions">
        {form('perform', xButtonLabel(t), 'done', 'primary')}
        {form('skip', 'Skip', 'skip')}
      </div>
    );
  return (
    <div class="actions">
      {t.profileUrl ? (
        <a class="button" href={t.profileUrl} target="_blank" rel="noopener noreferrer" data-action="open">
          Open profile<span class="visually-hidden" safe>{` of ${who} (opens in a new tab)`}</span>
        </a>
      ) : (
        <span class="muted">No profile link is known.</span>
      )}
      {t.text ? (
        <button type="button" data-action="copy" data-copy={`task-text-${t.id}`} hidden>
          Copy message<span class="visually-hidden" safe>{` for ${who}`}</span>
        </button>
      ) : (
        ''
      )}
      {form('complete', 'Done', 'done', 'primary')}
      {form('skip', 'Skip', 'skip')}
      <span class="outcome" role="status" data-copied></span>
    </div>
  );
}

function TaskCard(props: { t: TaskView; csrf: string; now: Date; notice?: Notice; engageApi: boolean }) {
  const { t, csrf, now } = props;
  return (
    <article class="reply task" id={`task-${t.id}`} data-task={t.id} tabindex="-1" aria-labelledby={`task-h-${t.id}`}>
      <h3 id={`task-h-${t.id}`}>
        <a href={`/console/leads/${t.lead.id}`} safe>
          {personOf(t)}
        </a>
      </h3>
      <p class="meta">
        <Badge value={t.kind} label={KIND_LABELS[t.kind] ?? humanize(t.kind)} tone="info" />
        {t.source === 'uncertain' ? (
          <>
            {' '}
            <Badge value="uncertain" label="Uncertain send" tone="warn" />
          </>
        ) : (
          ''
        )}{' '}
        · due <When at={t.dueAt} now={now} />
        {t.overdue ? (
          <>
            {' '}
            <Badge value="overdue" label="Overdue" tone="warn" />
          </>
        ) : (
          ''
        )}
      </p>
      <p>
        <strong safe>{whatToDo(t)}</strong>{' '}
        <span class="muted" safe>
          {REASONS[t.reason] ?? ''}
        </span>
      </p>
      {t.subject ? (
        <p>
          Subject: <span safe>{t.subject}</span>
        </p>
      ) : (
        ''
      )}
      {t.text ? (
        <blockquote class="their-message" id={`task-text-${t.id}`} safe>
          {t.text}
        </blockquote>
      ) : (
        ''
      )}
      <NoticeBox notice={props.notice} />
      <TaskButtons t={t} csrf={csrf} engageApi={props.engageApi} />
    </article>
  );
}

/** What is left of a card once its task is closed (htmx swaps it in place): the outcome, no buttons. */
function ClosedCard(props: { id: string; notice: Notice }) {
  return (
    <article class="reply task closed" id={`task-${props.id}`} data-task={props.id} data-closed tabindex="-1" aria-label="Closed task">
      <NoticeBox notice={props.notice} />
    </article>
  );
}

const TasksQuery = Type.Object(
  {
    account: Type.Optional(Type.String({ maxLength: 200 })),
    kind: Type.Optional(Type.String({ maxLength: 40 })),
    source: Type.Optional(Type.String({ maxLength: 40 })),
    after: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
const ActionBody = Type.Object({ _csrf: Type.Optional(Type.String()) }, { additionalProperties: true });

const query = (f: { account?: string; kind?: string; source?: string; after?: string }) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(f)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `/console/tasks?${s}` : '/console/tasks';
};

export function tasksPages(app: AppInstance, deps: ConsoleDeps) {
  const { tasks } = deps.services;

  app.get<{ Querystring: { account?: string; kind?: string; source?: string; after?: string } }>(
    '/console/tasks',
    { schema: { hide: true, querystring: TasksQuery } },
    async (req, reply) => {
      const workspaceId = req.consoleSession!.auth.workspaceId;
      // Empty fields (a GET form's `account=`) mean no filter; an unknown kind is no filter either.
      const account = req.query.account || undefined;
      const kind = req.query.kind && KINDS.includes(req.query.kind) ? req.query.kind : undefined;
      // The dashboard's "Uncertain sends" card links here with source=uncertain; any other value is no filter.
      const source = req.query.source === 'uncertain' ? ('uncertain' as const) : undefined;
      const after = req.query.after && isUuid(req.query.after) ? req.query.after.toLowerCase() : undefined;
      const [page, open, progress, x] = await Promise.all([
        tasks.list(workspaceId, { status: 'open', account, kind, source, limit: TASKS_PAGE_SIZE, after }),
        tasks.countOpenByAccount(workspaceId),
        deps.services.progress.progress(workspaceId, 1),
        deps.services.plays.listAccounts(workspaceId),
      ]);
      const names = new Map<string, string>([
        ...progress.accounts.map((a): [string, string] => [a.id, accountLabel(a.name, MODE_LABELS[a.mode] ?? humanize(a.mode))]),
        ...x.accounts.map((a): [string, string] => [a.userId, accountLabel(`@${a.handle.replace(/^@/, '')}`, 'X')]),
      ]);
      const groups = new Map<string, TaskView[]>();
      for (const t of page.tasks) groups.set(groupKeyOf(t), [...(groups.get(groupKeyOf(t)) ?? []), t]);
      const groupName = (key: string, t: TaskView) => names.get(key) ?? t.accountName ?? (key || 'No account');
      const total = [...open.values()].reduce((n, v) => n + v, 0);
      const ctx = await pageContext(req, reply, deps.services.consoleSessions);
      const now = new Date();
      return sendPage(reply, ctx, {
        title: 'Tasks',
        nav: 'tasks',
        scripts: ['tasks.js'],
        body: (
          <>
            <h1>{source ? 'Tasks: uncertain sends' : 'Tasks'}</h1>
            <NoticeBox notice={takeNotice(req, reply)} />
            <p class="meta">
              What a platform keeps from automation waits here for a person. X tasks are performed by their button, at the click; LinkedIn and Instagram tasks
              are done on the platform, then marked Done. Keys: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>Enter</kbd> or <kbd>d</kbd> the task's main button,{' '}
              <kbd>s</kbd> skip, <kbd>o</kbd> open profile, <kbd>c</kbd> copy message.
            </p>
            <form method="get" action="/console/tasks" class="filters" aria-label="Filter tasks">
              <label for="tasks-account">Account</label>{' '}
              <select id="tasks-account" name="account">
                <option value="">All accounts</option>
                {[...names].map(([id, name]) => (
                  <option value={id} selected={id === account} safe>
                    {`${name}: ${open.get(id) ?? 0} open`}
                  </option>
                ))}
              </select>{' '}
              <label for="tasks-kind">Kind</label>{' '}
              <select id="tasks-kind" name="kind">
                <option value="">All kinds</option>
                {KINDS.map((k) => (
                  <option value={k} selected={k === kind} safe>
                    {KIND_LABELS[k]}
                  </option>
                ))}
              </select>{' '}
              {source ? <input type="hidden" name="source" value={source} /> : ''}
              <button type="submit">Filter</button>
            </form>
            {page.tasks.length === 0 ? (
              <EmptyState title={account || kind || source ? 'No open task matches these filters.' : 'No task is waiting for you.'}>
                <p>
                  Steps that X, LinkedIn or Instagram keep from automation show here when they fall due: X DMs to people who never wrote, follows and likes, and
                  every step of a LinkedIn account set to Tasks (see <a href="/console/accounts">Accounts</a>).
                </p>
              </EmptyState>
            ) : (
              <TaskCount total={total} />
            )}
            {[...groups].map(([key, list]) => (
              <section aria-labelledby={`group-${key || 'none'}`}>
                <h2 id={`group-${key || 'none'}`} safe>
                  {groupName(key, list[0])}
                </h2>
                {list.map((t) => (
                  <TaskCard t={t} csrf={ctx.csrfToken} now={now} engageApi={deps.config.x.engageApi} />
                ))}
              </section>
            ))}
            <nav aria-label="Pages" class="pager">
              {after ? <a href={query({ account, kind, source })}>First page</a> : ''}
              {page.nextCursor ? <a href={query({ account, kind, source, after: page.nextCursor })}>Next page</a> : ''}
            </nav>
          </>
        ),
      });
    },
  );

  /** The notice a service refusal maps to; a 404 (foreign or unknown task) and anything unexpected propagate. */
  function refusalOf(err: unknown): TaskNotice {
    if (!(err instanceof AppError) || err.statusCode === 404) throw err;
    if (err.code === 'task_closed') return 'task_closed';
    if (err.code === 'channel_rate_limited') return 'x_rate_limited';
    if (err.code === 'task_not_performable' || err.code === 'do_it_on_platform') return 'not_performable';
    if (err.code === 'channel_send_failed') return 'x_refused';
    throw err;
  }

  /** An uncertain send's refusals: the e-mail's own words (a send later, not sendable), else the common ones. */
  function uncertainRefusalOf(err: unknown): TaskNotice {
    if (err instanceof AppError && (err.code === 'channel_send_failed' || err.code === 'channel_rate_limited')) return 'send_later';
    if (err instanceof AppError && (err.code === 'task_not_sendable' || err.code === 'task_not_uncertain')) return 'not_sendable';
    return refusalOf(err);
  }

  /** htmx redraws the card in place (closed, or still open with the refusal); a plain POST goes back to the queue. */
  async function answer(req: FastifyRequest, reply: FastifyReply, id: string, code: TaskNotice) {
    const notice: Notice = TASK_NOTICES[code];
    if (!req.headers['hx-request']) return redirectWithNotice(reply, '/console/tasks', notice);
    const workspaceId = req.consoleSession!.auth.workspaceId;
    const task = notice.kind === 'refused' ? await tasks.get(workspaceId, id) : null;
    if (!task || task.status !== 'open') {
      // The count changed (or another tab changed it): redrawn out of band beside the closed card.
      const total = [...(await tasks.countOpenByAccount(workspaceId)).values()].reduce((n, v) => n + v, 0);
      return sendFragment(
        reply,
        <>
          <ClosedCard id={id} notice={notice} />
          <TaskCount total={total} oob />
        </>,
      );
    }
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    return sendFragment(reply, <TaskCard t={task} csrf={ctx.csrfToken} now={new Date()} notice={notice} engageApi={deps.config.x.engageApi} />);
  }

  const taskId = (id: string) => {
    if (!isUuid(id)) throw notFound('task');
    return id.toLowerCase();
  };
  const route = { schema: { hide: true, body: ActionBody } };

  /** One button's POST: `run` closes the task and says which notice follows; a refusal says why it did not. */
  function button(path: string, run: (workspaceId: string, id: string, by: string) => Promise<TaskNotice>, refused = refusalOf) {
    app.post<{ Params: { id: string } }>(`/console/tasks/:id/${path}`, route, async (req, reply) => {
      const id = taskId(req.params.id);
      let code: TaskNotice;
      try {
        code = await run(req.consoleSession!.auth.workspaceId, id, consoleBy(req.consoleSession!.auth));
      } catch (err) {
        code = refused(err);
      }
      return answer(req, reply, id, code);
    });
  }

  button('complete', async (ws, id, by) => (await tasks.complete(ws, id, by), 'done'));
  button('skip', async (ws, id, by) => ((await tasks.skip(ws, id, by)).source === 'uncertain' ? 'left' : 'skipped'));
  // Send DM / Follow / Like: the one path that performs an X action on a task, by a signed-in person, at the click.
  button('perform', async (ws, id, by) => ((await tasks.performAtClick(ws, id, by)).kind === 'x_dm' ? 'sent_dm' : 'engaged'));
  // Send anyway: the uncertain e-mail goes again at the click, with a fresh Message-ID (tasks.sendAnyway).
  button(
    'send-anyway',
    async (ws, id, by) => ((await tasks.sendAnyway(ws, id, by)).closedReason === 'send_failed' ? 'send_failed' : 'sent_anyway'),
    uncertainRefusalOf,
  );
  button('mark-sent', async (ws, id, by) => (await tasks.markSent(ws, id, by), 'marked_sent'), uncertainRefusalOf);
}
