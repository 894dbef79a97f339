import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { TextCipher } from '../../lib/crypto.js';
import type { TaskStatus } from '../../db/schema.js';
import { badRequest, conflict, notFound, tooManyRequests, unavailable } from '../../lib/errors.js';
import type { ActionResult, ChannelDrivers, OutboundAction } from '../../channels/types.js';
import type { ChannelDescriptor, ChannelRegistry } from '../../channels/descriptor.js';
import { recipientIdentityOf } from '../../channels/recipients.js';
import { iso } from '../../domain/iso.js';
import { stepKeyOfUncertain, type StepTaskRef, type TaskSource, type UncertainTaskRef } from '../../domain/tasks.js';
import type { Channel, StepKind } from '../../domain/vocabulary.js';
import { rollbackIfDryRun } from '../../lib/dry-run.js';
import * as repo from './tasks.repository.js';

// Tasks (docs/tasks.md): what a person must do because a platform's rules keep it from automation
// (domain/policy.ts). Listing, completing and skipping are here; the engine and the reply decisions open them.
// Completing through the API or MCP only records that a person did it; `perform` (the console's button, a signed-in
// person) is the one path that acts on a platform, and only on X, at the click.

const DAY_MS = 86_400_000;

/** The step task's end as the engine records it (engine/tasks.ts), lent by the composition root. */
export interface StepTaskRecorder {
  /** `counted`: the driver that performed it (the console's X click) already took its unit on the budget. */
  completeStepTask(
    trx: Database,
    task: StepTaskInput,
    by: string,
    externalId: string | null,
    now: Date,
    opts?: { counted?: boolean },
  ): Promise<'recorded' | 'stale'>;
  skipStepTask(trx: Database, task: StepTaskInput, by: string, now: Date): Promise<'recorded' | 'stale'>;
  /** An uncertain send arrived (`marked_sent`) or went again (`sent_anyway`, with the driver's final error or null). */
  completeUncertainTask(
    trx: Database,
    task: UncertainTaskRef,
    how: { answer: 'marked_sent'; by: string } | { answer: 'sent_anyway'; by: string; error: string | null },
    now: Date,
  ): Promise<void>;
  /** An uncertain send left as recorded. */
  dismissUncertainTask(trx: Database, task: UncertainTaskRef, by: string, now: Date): Promise<void>;
}
/** The step task handed to the engine (domain/tasks.ts). */
export type StepTaskInput = StepTaskRef;

/** A reply decision's answer, recorded by the replies module when its task ends (lent by the composition root). */
export interface ReplyTaskRecorder {
  completeReplyTask(trx: Database, task: ReplyTaskInput, by: string, now: Date): Promise<'recorded' | 'stale'>;
  skipReplyTask(trx: Database, task: ReplyTaskInput, by: string, now: Date): Promise<'recorded' | 'stale'>;
}
export interface ReplyTaskInput {
  id: string;
  workspaceId: string;
  leadId: string;
  replyId: string;
  decision: string;
  channel: string;
  action: string;
  accountId: string | null;
}

export interface TasksServiceDeps {
  db: Database;
  clock: Clock;
  cipher: TextCipher;
  drivers: ChannelDrivers;
  /** The channel registry: which channels' tasks a click performs, and whose uncertain sends may go again. */
  channels: ChannelRegistry;
  steps: StepTaskRecorder;
  replies: ReplyTaskRecorder;
}

export interface TaskView {
  id: string;
  status: TaskStatus;
  source: TaskSource;
  kind: StepKind | 'reply';
  channel: Channel;
  action: string;
  reason: string;
  lead: { id: string; person: string | null; company: string | null; linkedinUrl: string | null; username: string | null };
  account: string | null;
  accountName: string | null;
  xAccount: string | null;
  sequenceId: string | null;
  step: number | null;
  replyId: string | null;
  decision: string | null;
  subject: string | null;
  text: string | null;
  actions: { type: string; count: number | null; reaction: string | null }[];
  profileUrl: string | null;
  dueAt: string;
  overdue: boolean;
  createdAt: string;
  closedAt: string | null;
  closedBy: string | null;
  closedReason: string | null;
}

export interface ListTasksInput {
  status?: TaskStatus;
  source?: TaskSource;
  account?: string;
  kind?: string;
  limit?: number;
  after?: string;
}

export function createTasksService(deps: TasksServiceDeps) {
  const { db, clock, cipher } = deps;

  function toView(r: repo.TaskRow, now: Date): TaskView {
    const due = new Date(r.due_at);
    return {
      id: r.id,
      status: r.status,
      source: r.source,
      kind: r.kind as TaskView['kind'],
      channel: r.channel as Channel,
      action: r.action,
      reason: r.reason,
      lead: { id: r.lead_id, person: r.person, company: r.company, linkedinUrl: r.linkedin_url, username: r.username },
      account: r.account_id,
      accountName: r.account_name,
      xAccount: r.x_account_user_id,
      sequenceId: r.sequence_id,
      step: r.step_index,
      replyId: r.reply_id,
      decision: r.decision,
      subject: r.subject,
      text: cipher.decrypt(r.text),
      actions: Array.isArray(r.actions) ? r.actions : [],
      profileUrl: r.profile_url,
      dueAt: due.toISOString(),
      // Overdue: still open a day after it fell due (docs/tasks.md).
      overdue: r.status === 'open' && now.getTime() - due.getTime() > DAY_MS,
      createdAt: new Date(r.created_at).toISOString(),
      closedAt: iso(r.closed_at),
      closedBy: r.closed_by,
      closedReason: r.closed_reason,
    };
  }

  async function list(workspaceId: string, input: ListTasksInput = {}) {
    const limit = input.limit ?? 100;
    let after: { dueAt: Date; id: string } | undefined;
    if (input.after) {
      const c = await repo.cursorOf(db, workspaceId, input.after);
      if (!c) throw badRequest('invalid_cursor', 'after: not a cursor of this workspace’s task list; pass the previous page’s nextCursor');
      after = c;
    }
    const rows = await repo.pageTasks(db, workspaceId, {
      status: input.status ?? 'open',
      source: input.source,
      accountId: input.account,
      kind: input.kind,
      limit: limit + 1,
      after,
    });
    const now = clock.now();
    const page = rows.slice(0, limit);
    return { tasks: page.map((r) => toView(r, now)), nextCursor: rows.length > limit ? page[page.length - 1].id : null };
  }

  async function get(workspaceId: string, id: string): Promise<TaskView> {
    const row = await repo.findTask(db, workspaceId, id);
    if (!row) throw notFound('task');
    return toView(row, clock.now());
  }

  const stepInput = (t: repo.TaskRow): StepTaskInput => ({
    id: t.id,
    workspaceId: t.workspace_id,
    leadId: t.lead_id,
    sequenceId: t.sequence_id!,
    stepIndex: t.step_index!,
    variantKey: t.variant_key,
    idempotencyKey: t.idempotency_key,
  });
  const replyInput = (t: repo.TaskRow): ReplyTaskInput => ({
    id: t.id,
    workspaceId: t.workspace_id,
    leadId: t.lead_id,
    replyId: t.reply_id!,
    decision: t.decision ?? 'send',
    channel: t.channel,
    action: t.action,
    accountId: t.account_id,
  });

  const uncertainInput = (t: repo.TaskRow): UncertainTaskRef => ({
    id: t.id,
    workspaceId: t.workspace_id,
    leadId: t.lead_id,
    stepIndex: t.step_index,
    kind: t.kind,
    channel: t.channel,
    action: t.action,
    accountId: t.account_id,
    actions: Array.isArray(t.actions) ? t.actions : [],
    stepKey: stepKeyOfUncertain(t.idempotency_key),
  });

  /** The open task under its row lock: 404 for none of this workspace, 409 once closed. */
  async function lockOpen(trx: Database, workspaceId: string, id: string): Promise<repo.TaskRow> {
    const task = await repo.lockTask(trx, workspaceId, id);
    if (!task) throw notFound('task');
    if (task.status !== 'open') throw conflict('task_closed', `the task is already ${task.status}`, { status: task.status });
    return task;
  }

  /**
   * Closes an open task under its row lock, then records its end as its source says (the engine for a step or an
   * uncertain send, the replies module for a reply decision). `act` (the console's X button) runs last, in the same
   * transaction: if X refuses, nothing of it is kept and the task stays open. A task whose lead no longer holds it is
   * cancelled.
   */
  async function close(
    workspaceId: string,
    id: string,
    how: { done: boolean; by: string; dryRun?: boolean; act?: (t: repo.TaskRow, trx: Database) => Promise<string | null> },
  ): Promise<TaskView> {
    const now = clock.now();
    // Under dryRun (MCP) the real close runs and rolls back: the answer and every refusal are the real ones.
    const result = await rollbackIfDryRun(
      how.dryRun && !how.act,
      (work) => db.transaction().execute(work),
      async (trx: Database) => {
        const task = await lockOpen(trx, workspaceId, id);
        // Done on an uncertain send is Mark as sent, Skip is Leave it (docs/tasks.md).
        if (task.source === 'uncertain') {
          if (how.act) throw badRequest('task_not_performable', 'an uncertain send is answered with Send anyway, Mark as sent or Leave it');
          return { stale: false as const, view: await answerUncertain(trx, task, how.done ? 'marked_sent' : 'left', how.by, now) };
        }
        await repo.closeTask(trx, { workspaceId, id, status: how.done ? 'done' : 'skipped', by: how.by, reason: null, externalId: null, at: now });
        // A leaver notice's replacement: the person records what they decided; nothing else is written (docs/tasks.md).
        if (task.source === 'leaver') {
          if (how.act) throw badRequest('task_not_performable', 'a leaver task is done by a person outside the service; record it with complete or skip');
          return { stale: false as const, view: toView((await repo.findTask(trx, workspaceId, id))!, now) };
        }
        const recorded =
          task.source === 'step'
            ? how.done
              ? await deps.steps.completeStepTask(trx, stepInput(task), how.by, null, now, { counted: how.act !== undefined })
              : await deps.steps.skipStepTask(trx, stepInput(task), how.by, now)
            : how.done
              ? await deps.replies.completeReplyTask(trx, replyInput(task), how.by, now)
              : await deps.replies.skipReplyTask(trx, replyInput(task), how.by, now);
        if (recorded === 'stale') {
          await repo.closeTask(trx, { workspaceId, id, status: 'cancelled', by: null, reason: 'no_longer_applies', externalId: null, at: now });
          return { stale: true as const };
        }
        if (how.act) {
          const externalId = await how.act(task, trx);
          await repo.closeTask(trx, { workspaceId, id, status: 'done', by: how.by, reason: null, externalId, at: now });
        }
        // Read in the transaction, so a dry run answers the task as the real call leaves it.
        const closed = await repo.findTask(trx, workspaceId, id);
        return { stale: false as const, view: toView(closed!, now) };
      },
    );
    if (result.stale) throw conflict('task_closed', 'the task no longer applies: its lead moved on', { status: 'cancelled' });
    return result.view;
  }

  /**
   * A person's answer to an uncertain send, in the caller's transaction with the task locked open (docs/tasks.md
   * "Uncertain sends"). Mark as sent: the engine records it sent, then the channel is told (the e-mail driver threads
   * later steps on it). Send anyway: sent again under a fresh key, `<step key>:again:<task id>` (a fresh Message-ID;
   * a retry of this one answer reuses it); a retryable refusal throws, so nothing is kept and the task stays open.
   * Leave it: the step stays as recorded.
   */
  async function answerUncertain(trx: Database, task: repo.TaskRow, answer: 'marked_sent' | 'sent_anyway' | 'left', by: string, now: Date) {
    const ref = uncertainInput(task);
    let sent: { externalId: string | null; error: string | null } | null = null;
    if (answer === 'sent_anyway') {
      const channel = deps.channels.ofChannel(task.channel);
      if (!channel?.resendsUncertain)
        throw badRequest('task_not_sendable', 'Send anyway is offered only for uncertain e-mail sends; answer this one with Mark as sent or Leave it');
      sent = await sendAgain(channel, task, ref.stepKey, trx, now);
    }
    const status = answer === 'left' ? 'skipped' : 'done';
    const reason = sent?.error ? 'send_failed' : null;
    await repo.closeTask(trx, { workspaceId: task.workspace_id, id: task.id, status, by, reason, externalId: sent?.externalId ?? null, at: now });
    if (answer === 'left') await deps.steps.dismissUncertainTask(trx, ref, by, now);
    else if (answer === 'marked_sent') await deps.steps.completeUncertainTask(trx, ref, { answer, by }, now);
    else await deps.steps.completeUncertainTask(trx, ref, { answer, by, error: sent?.error ?? null }, now);
    if (answer === 'marked_sent')
      await deps.drivers.forChannel(task.channel).acknowledge?.({ workspaceId: task.workspace_id, idempotencyKey: ref.stepKey }, { db: trx });
    return toView((await repo.findTask(trx, task.workspace_id, task.id))!, now);
  }

  /** Who a task's action goes to, from the lead's fields the task row carries. */
  const recipientOfTask = (task: repo.TaskRow) =>
    recipientIdentityOf({
      id: task.lead_id,
      person: task.person,
      email: task.email,
      linkedin_url: task.linkedin_url,
      x_user_id: task.x_user_id,
      username: task.username,
      sandbox: task.sandbox,
    });

  /**
   * The uncertain send made again (a channel that `resendsUncertain`: e-mail): the task's subject and text to the lead,
   * from the lead's account (its mailbox, or the fallback), under a fresh key.
   */
  async function sendAgain(channel: ChannelDescriptor, task: repo.TaskRow, stepKey: string, trx: Database, now: Date) {
    // The step's text could not be rendered again when the task opened: there is nothing to send.
    if (!task.text) throw badRequest('task_not_sendable', 'this uncertain send has no text to send again; mark it as sent or leave it', { field: 'task' });
    const action: OutboundAction = {
      workspaceId: task.workspace_id,
      accountId: task.account_id,
      accountUserId: null,
      kind: task.kind,
      channel: channel.channel,
      recipient: recipientOfTask(task),
      subject: task.subject,
      text: cipher.decrypt(task.text),
      actions: [],
      idempotencyKey: `${stepKey}:again:${task.id}`,
      at: now,
      byPerson: true,
      attempt: 0,
    };
    const result: ActionResult = await deps.drivers.forChannel(channel.channel).perform(action, { db: trx });
    if (result.outcome === 'ok') return { externalId: result.externalId, error: null };
    if (result.outcome === 'rate_limited')
      throw tooManyRequests('channel_rate_limited', result.retryAfterSeconds, 'the mailbox is rate limited; nothing was sent and the task stays open');
    // The connection was lost while the server was taking it: it may have arrived. Nothing is recorded (this
    // transaction rolls back) and the task stays open, so the person looks before sending again.
    if (result.outcome === 'uncertain')
      throw unavailable(
        'channel_send_uncertain',
        'the connection was lost while the server was taking the e-mail; it may have arrived, check before sending again',
        {
          reason: result.error,
        },
      );
    if (result.outcome === 'needs_person' || result.retryable || result.waitSeconds !== undefined) {
      const reason = result.outcome === 'needs_person' ? result.reason : result.error;
      throw unavailable('channel_send_failed', 'the e-mail did not go; nothing was recorded and the task stays open', { reason });
    }
    // A final refusal (an invalid or suppressed address): recorded as the person's decision, failed, and the task closes.
    return { externalId: null, error: result.error };
  }

  /** One of the three answers to an uncertain send, in its own transaction (dryRun: run and roll back). */
  async function answerUncertainTask(workspaceId: string, id: string, answer: 'marked_sent' | 'sent_anyway', by: string, opts: { dryRun?: boolean } = {}) {
    const now = clock.now();
    return rollbackIfDryRun(
      opts.dryRun === true && answer !== 'sent_anyway',
      (work) => db.transaction().execute(work),
      async (trx: Database) => {
        const task = await lockOpen(trx, workspaceId, id);
        if (task.source !== 'uncertain')
          throw badRequest('task_not_uncertain', 'Send anyway and Mark as sent answer uncertain sends only; record other tasks with complete or skip');
        return answerUncertain(trx, task, answer, by, now);
      },
    );
  }

  /**
   * The action a console click performs, for a channel `performedByClick` (X), through its driver as the account's
   * person (never automation): from the platform account the task names, or the lead's messaging account.
   */
  async function performAtClick(task: repo.TaskRow, trx: Database): Promise<string | null> {
    const channel = deps.channels.ofChannel(task.channel);
    const fromAccountUser = channel?.sendsFrom === 'account_user';
    if (!channel?.performedByClick || (fromAccountUser && !task.x_account_user_id))
      throw badRequest('task_not_performable', 'only X tasks are performed here; do the others on the platform and press Done');
    const name = channel.labels.name;
    const action: OutboundAction = {
      workspaceId: task.workspace_id,
      accountId: fromAccountUser ? null : task.account_id,
      accountUserId: fromAccountUser ? task.x_account_user_id : null,
      kind: task.kind,
      channel: channel.channel,
      recipient: recipientOfTask(task),
      subject: null,
      text: cipher.decrypt(task.text),
      actions: Array.isArray(task.actions) ? task.actions : [],
      idempotencyKey: `task:${task.id}`,
      at: clock.now(),
      byPerson: true,
      // Looked for before it is sent, as a retry is: a click whose DM reached X but whose record was lost (a crash
      // before this transaction committed) leaves the task open, and the next click must not DM the person again.
      attempt: 1,
    };
    const result: ActionResult = await deps.drivers.forChannel(channel.channel).perform(action, { db: trx });
    if (result.outcome === 'ok') return result.externalId;
    // The platform leaves this act to the person (an X follow or like on a tier without the endpoint): they do it there.
    if (result.outcome === 'needs_person')
      throw conflict('do_it_on_platform', `${name} leaves this to you: open the profile, do it on ${name}, then press Done`, { reason: result.reason });
    if (result.outcome === 'rate_limited')
      throw tooManyRequests('channel_rate_limited', result.retryAfterSeconds, `${name} is rate limiting this account; the task stays open`);
    throw unavailable('channel_send_failed', `${name} did not take it; the task stays open`, { reason: result.error });
  }

  return {
    list,
    get,
    /** Records that a person did it themselves (API, MCP, the console's Done). Nothing is sent. */
    complete: (workspaceId: string, id: string, by: string, options: { dryRun?: boolean } = {}) =>
      close(workspaceId, id, { done: true, by, dryRun: options.dryRun }),
    skip: (workspaceId: string, id: string, by: string, options: { dryRun?: boolean } = {}) =>
      close(workspaceId, id, { done: false, by, dryRun: options.dryRun }),
    /** The console's Send DM / Follow / Like: performs the action at the click (a channel `performedByClick`: X), then records it as done. */
    performAtClick: async (workspaceId: string, id: string, by: string) => {
      // The account's token is made ready before the transaction (a refresh commits on its own: channels/types.ts).
      const task = await repo.findTask(db, workspaceId, id);
      if (task?.x_account_user_id && deps.channels.ofChannel(task.channel)?.performedByClick)
        await deps.drivers.forChannel(task.channel).prepare?.({ workspaceId, accountUserId: task.x_account_user_id });
      return close(workspaceId, id, { done: true, by, act: performAtClick });
    },
    /** Mark as sent: a person says the uncertain send arrived (nothing is sent). */
    markSent: (workspaceId: string, id: string, by: string, options: { dryRun?: boolean } = {}) =>
      answerUncertainTask(workspaceId, id, 'marked_sent', by, options),
    /** Send anyway: the uncertain e-mail goes again, with a fresh Message-ID (console and API; never an agent's dry run). */
    sendAnyway: (workspaceId: string, id: string, by: string) => answerUncertainTask(workspaceId, id, 'sent_anyway', by),
    /** Open uncertain sends of the workspace (the dashboard's card). */
    countOpenUncertain: (workspaceId: string) => repo.countOpenUncertain(db, workspaceId),
    /** Open uncertain sends per mailbox (an account when no mailbox is known): readiness. */
    uncertainSends: (workspaceId: string) => repo.uncertainSendsByMailbox(db, workspaceId),
    /** Open tasks per account id (messaging account or X account user id): dashboard, readiness, /progress. */
    countOpenByAccount: (workspaceId: string) => repo.countOpenByAccount(db, workspaceId),
  };
}

export type TasksService = ReturnType<typeof createTasksService>;
