import type { Config } from '../../config/config.js';
import { storedSteps, type StoredStep } from '../../domain/stored-steps.js';
import type { Database } from '../../db/database.js';
import type { SequenceStepRow } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { rollbackIfDryRun } from '../../lib/dry-run.js';
import { conflict, notFound } from '../../lib/errors.js';
import { blockingRules, type AdmissionContext, type AdmissionFacts, type AdmissionRule } from '../../domain/admission.js';
// The engine's own step-to-channel map, so this report and the sender never disagree.
import { CHANNEL_OF_STEP } from '../../channels/types.js';
import * as repo from './sequences.repository.js';
import { isStepKind, type SequenceStatus } from '../../domain/vocabulary.js';
import { canonicalCondition } from '../../domain/branches.js';
import type { EXECUTION_BLOCK_REASONS, SETTABLE_STATUSES } from './sequences.schemas.js';

export type SettableStatus = (typeof SETTABLE_STATUSES)[number];
export type ExecutionBlockReason = (typeof EXECUTION_BLOCK_REASONS)[number];

export interface RunContext {
  /** The workspace row as the admission list reads it (billing, energy and its refill, the X channel switch). */
  workspace: AdmissionFacts['workspace'];
  /** A messaging account with stored status `connected` exists (sends every step except the X ones). */
  hasConnectedMessagingAccount: boolean;
  /** A connected social-network account is saved (sends the X steps). */
  hasXAccount: boolean;
  /** The workspace has a mailbox pool: e-mail steps of leads without an account go out from it (absent: false). */
  hasMailboxPool?: boolean;
  /** The admission list's context: now, and the energy one engine action costs. */
  admission: AdmissionContext;
}

/** Declared channels plus those the steps imply, so a sequence that forgot to declare `x` still needs an X account. */
export function requiredChannels(channels: string[], steps: { kind: string }[]): string[] {
  const out = new Set(channels);
  for (const step of steps) {
    const channel = CHANNEL_OF_STEP[step.kind as SequenceStepRow['kind']];
    if (channel) out.add(channel);
  }
  return [...out];
}

/** The admission rules that are a property of a sequence and its workspace (the rest are per lead or per moment). */
const sequenceLevel = (r: AdmissionRule) => r.effect === 'hold' && (r.scope === 'sequence' || r.scope === 'workspace' || r.scope === 'sender');

/** A channel of a sequence and what keeps the workspace from sending on it (null: a sender can). */
export interface SenderLane {
  channel: 'x' | 'email' | 'linkedin';
  blockedBy: 'x_channel_disabled' | 'no_sender_for_channel' | 'sender_not_connected' | null;
}

/** The workspace's senders as the admission list's sender rules read them, for a sequence as a whole. */
function workspaceSenders(ctx: RunContext): AdmissionFacts['sender'] {
  return {
    account: ctx.hasConnectedMessagingAccount ? { stored_status: 'connected', time_zone: null } : null,
    xAccountSaved: ctx.hasXAccount,
    xAccountNamed: ctx.hasXAccount,
    mailboxPool: ctx.hasMailboxPool === true,
  };
}

/**
 * The sequence's channels, each with whether the workspace has a sender for it, by the admission list's sender rules
 * (domain/admission.ts) asked with one step of that channel: X steps need the X channel on and an X account saved;
 * e-mail steps a connected account or a mailbox pool; every other step a connected messaging account. A draft whose
 * channel has no sender is warned about, and approving it is refused (sequences' `approvalBlock`).
 */
export function senderLanes(seq: { channels: string[]; steps: { kind: string }[] }, ctx: RunContext): SenderLane[] {
  const needed = requiredChannels(seq.channels, seq.steps);
  const lanes: { channel: SenderLane['channel']; kind: string }[] = [
    ...(needed.includes('x') ? [{ channel: 'x' as const, kind: 'x_dm' }] : []),
    ...(needed.includes('email') ? [{ channel: 'email' as const, kind: 'email' }] : []),
    ...(needed.some((c) => c !== 'x' && c !== 'email') ? [{ channel: 'linkedin' as const, kind: 'connect' }] : []),
  ];
  return lanes.map(({ channel, kind }) => {
    const facts: AdmissionFacts = {
      sequence: { status: 'active', revision: 1, approved_revision: 1 },
      workspace: ctx.workspace,
      step: { kind },
      sender: workspaceSenders(ctx),
    };
    const lane = blockingRules(facts, ctx.admission, (r) => r.scope === 'sender');
    const blockedBy = (['x_channel_disabled', 'no_sender_for_channel', 'sender_not_connected'] as const).find((r) => lane.includes(r)) ?? null;
    return { channel, blockedBy };
  });
}

/**
 * The first obstacle in the order a user has to clear them: approval comes before activation because
 * activating an unapproved revision is refused, and workspace-wide obstacles come after the
 * sequence's own. Reads the engine's admission list (src/domain/admission.ts, the rules its claim is built from)
 * for a sequence as a whole, so null means the engine may pick the sequence's leads; per-lead rules (the lead's own
 * sender, snooze, opt-out, a suppressed address) and the sending hours are not a property of the sequence. Each
 * channel the sequence needs is asked with one step of it, sent by any connected account of the workspace.
 */
export function executionBlockReason(
  seq: { status: SequenceStatus; revision: number; approvedRevision: number | null; channels: string[]; steps: { kind: string }[] },
  ctx: RunContext,
): ExecutionBlockReason | null {
  const facts: AdmissionFacts = {
    sequence: { status: seq.status, revision: seq.revision, approved_revision: seq.approvedRevision },
    workspace: ctx.workspace,
    step: null,
    sender: workspaceSenders(ctx),
  };
  const blocked = new Set(blockingRules(facts, ctx.admission, sequenceLevel));
  if (blocked.has('sequence_not_active') && seq.status === 'archived') return 'sequence_archived';
  if (blocked.has('sequence_not_approved')) return 'sequence_approval_required';
  if (blocked.has('sequence_not_active')) return seq.status === 'draft' ? 'sequence_draft' : 'sequence_paused';
  if (blocked.has('billing_inactive')) return 'billing_inactive';
  const lanes = senderLanes(seq, ctx);
  if (lanes.some((l) => l.blockedBy === 'x_channel_disabled')) return 'x_channel_disabled';
  if (lanes.some((l) => l.blockedBy !== null)) return 'no_sending_account';
  if (blocked.has('energy_exhausted')) return 'energy_exhausted';
  return null;
}

/** Stored steps may omit optional fields (world files, older rows); the API always answers every field. */
export function toStep(raw: StoredStep, position: number) {
  const num = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isInteger(v) ? v : fallback);
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    index: num(raw.index, position),
    kind: isStepKind(String(raw.kind)) ? (raw.kind as SequenceStepRow['kind']) : 'message',
    delayDays: num(raw.delayDays, 0),
    subject: str(raw.subject),
    message: str(raw.message),
    actions: Array.isArray(raw.actions)
      ? raw.actions.map((a) => ({ type: String(a?.type ?? ''), count: typeof a?.count === 'number' ? a.count : null, reaction: str(a?.reaction) }))
      : [],
    variants: Array.isArray(raw.variants)
      ? raw.variants.map((v) => ({
          key: String(v?.key ?? ''),
          weight: typeof v?.weight === 'number' ? v.weight : 0,
          messageTmpl: String(v?.messageTmpl ?? ''),
        }))
      : null,
    tool: str(raw.tool),
    // A branching step's x-extensions (docs/sequences-and-leads.md "Branches"), answered only when the step has them.
    ...branchPropertiesOf(raw),
  };
}

/** The branch properties of a stored step as the API answers them; a linear step has none. */
function branchPropertiesOf(raw: StoredStep): { id?: string; next?: NonNullable<SequenceStepRow['next']>; else?: string } {
  const out: { id?: string; next?: NonNullable<SequenceStepRow['next']>; else?: string } = {};
  if (typeof raw.id === 'string') out.id = raw.id;
  if (Array.isArray(raw.next))
    out.next = raw.next
      .filter((e) => typeof e === 'object' && e !== null && typeof e.goto === 'string' && typeof e.if === 'object' && e.if !== null)
      .map((e) => ({ if: canonicalCondition(e.if), ...(typeof e.withinDays === 'number' && { withinDays: e.withinDays }), goto: e.goto }));
  if (typeof raw.else === 'string') out.else = raw.else;
  return out;
}

export type Step = ReturnType<typeof toStep>;
export type StepChange =
  | { position: number; change: 'unchanged'; step: Step }
  | { position: number; change: 'changed'; step: Step; approved: Step }
  | { position: number; change: 'added'; step: Step }
  | { position: number; change: 'removed'; approved: Step };

/**
 * Step by step, by position: what a reviewer approving the current revision approves beyond the approved one.
 * Steps are compared by content (kind, delay, subject, message, actions, variants, tool), not by object identity.
 */
export function diffSteps(approved: Step[], current: Step[]): StepChange[] {
  const same = (a: Step, b: Step) => JSON.stringify({ ...a, index: 0 }) === JSON.stringify({ ...b, index: 0 });
  const out: StepChange[] = [];
  for (let i = 0; i < Math.max(approved.length, current.length); i++) {
    const before = approved[i];
    const now = current[i];
    if (before && now)
      out.push(same(before, now) ? { position: i, change: 'unchanged', step: now } : { position: i, change: 'changed', step: now, approved: before });
    else if (now) out.push({ position: i, change: 'added', step: now });
    else out.push({ position: i, change: 'removed', approved: before });
  }
  return out;
}

type Transition = { to: SettableStatus } | { error: 'sequence_approval_required' | 'archived_sequence_is_read_only' | 'invalid_transition' };

/** The spec's transition table, exactly; anything it does not list is refused rather than guessed. */
export function decideTransition(from: SequenceStatus, to: SettableStatus, approved: boolean): Transition {
  if (from === 'archived') return { error: 'archived_sequence_is_read_only' };
  if (to === 'active') return approved ? { to } : { error: 'sequence_approval_required' };
  if (to === 'paused') return from === 'active' ? { to } : { error: 'invalid_transition' };
  return from === 'active' || from === 'paused' ? { to } : { error: 'invalid_transition' };
}

const CONFLICT_MESSAGES = {
  sequence_approval_required:
    'the current revision of the sequence is not approved; approve it on its page in the console (Sequences) or through the agent-tool server',
  archived_sequence_is_read_only: 'an archived sequence cannot change status',
  invalid_transition: 'the sequence status table does not allow this change',
} as const;

/** What the admission list needs to judge a workspace's sequences as wholes (RunContext), read in one round. */
export async function readRunContext(deps: { db: Database; clock: Clock; config: Pick<Config, 'engine'> }, workspaceId: string): Promise<RunContext> {
  const { db, clock, config } = deps;
  const [ws, hasConnectedMessagingAccount, hasXAccount, hasMailboxPool] = await Promise.all([
    repo.findWorkspaceRunState(db, workspaceId),
    repo.hasConnectedMessagingAccount(db, workspaceId),
    repo.hasXAccount(db, workspaceId),
    repo.hasMailboxPool(db, workspaceId),
  ]);
  return {
    // A workspace that is gone reads as canceled with nothing to spend.
    workspace: ws ?? { billing_status: 'canceled', energy_balance: 0, energy_daily_refill: 0, energy_refilled_at: clock.now(), x_channel_enabled: false },
    hasConnectedMessagingAccount,
    hasXAccount,
    hasMailboxPool,
    admission: { now: clock.now(), unitsPerAction: config.engine.unitsPerAction, sendingWindow: config.engine.pacing },
  };
}

/**
 * The channels of these steps that no sender of the workspace can carry (senderLanes' `no_sender_for_channel` and
 * `sender_not_connected`): a draft's warning, and why approving it is refused (authoring's approveSequence).
 */
export async function channelsWithoutSender(
  deps: { db: Database; clock: Clock; config: Pick<Config, 'engine'> },
  workspaceId: string,
  seq: { channels: string[]; steps: { kind: string }[] },
): Promise<SenderLane['channel'][]> {
  return lanesWithoutSender(seq, await readRunContext(deps, workspaceId));
}

function lanesWithoutSender(seq: { channels: string[]; steps: { kind: string }[] }, ctx: RunContext): SenderLane['channel'][] {
  return senderLanes(seq, ctx)
    .filter((l) => l.blockedBy === 'no_sender_for_channel' || l.blockedBy === 'sender_not_connected')
    .map((l) => l.channel);
}

export function createSequencesService(deps: { db: Database; clock: Clock; config: Config }) {
  const { db, clock } = deps;

  async function readSequences(workspaceId: string, onlySequenceId?: string) {
    const [rows, ctx] = await Promise.all([repo.listSequencesWithLeadCounts(db, workspaceId, onlySequenceId), readRunContext(deps, workspaceId)]);
    return rows.map((r) => {
      const steps = storedSteps(r.steps).map((s, i) => toStep(s, i));
      const channels = r.channels ?? [];
      return {
        id: r.id,
        name: r.name,
        status: r.status,
        revision: r.revision,
        approvedAt: r.approved_at ? r.approved_at.toISOString() : null,
        approvedRevision: r.approved_revision,
        executionBlockReason: executionBlockReason({ status: r.status, revision: r.revision, approvedRevision: r.approved_revision, channels, steps }, ctx),
        leadCount: Number(r.lead_count ?? 0),
        channels,
        steps,
        approvedSteps: r.approved_steps === null ? null : storedSteps(r.approved_steps).map((s, i) => toStep(s, i)),
        // For the console's sequence page (not an API field): the channels no sender of the workspace can carry.
        channelsWithoutSender: r.status === 'archived' ? [] : lanesWithoutSender({ channels, steps }, ctx),
        // An extension of the spec's object, answered only when set: a sequence without it reads as the spec's.
        ...(r.send_in_lead_hours ? { sendInLeadHours: true as const } : {}),
      };
    });
  }

  /** The API's list (GET /sequences): every field of the spec, nothing more. */
  async function listSequences(workspaceId: string) {
    return (await readSequences(workspaceId)).map(({ approvedSteps: _approvedSteps, channelsWithoutSender: _without, ...view }) => view);
  }

  /**
   * One sequence for a reviewer: the list's fields, plus what changed since the approved revision, step by step.
   * `approvedStepsKnown` is false when the approval predates migration 0017, which began keeping approved steps.
   */
  async function getSequenceForReview(workspaceId: string, sequenceId: string) {
    const [seq] = await readSequences(workspaceId, sequenceId);
    if (!seq) throw notFound('sequence');
    const { approvedSteps, ...view } = seq;
    const approvedStepsKnown = seq.approvedRevision === null || approvedSteps !== null;
    return { ...view, approvedStepsKnown, changes: diffSteps(approvedSteps ?? [], seq.steps) };
  }

  /**
   * Changes status only: never edits or approves content, so `revision` is left exactly as it is. Under `dryRun`
   * the real transition runs and rolls back, so the answer and every refusal are the real ones.
   */
  async function setStatus(workspaceId: string, sequenceId: string, status: SettableStatus, options: { dryRun?: boolean } = {}) {
    return rollbackIfDryRun(
      options.dryRun,
      (work) => db.transaction().execute(work),
      async (trx: Database) => {
        const seq = await repo.lockSequence(trx, workspaceId, sequenceId);
        if (!seq) throw notFound('sequence');
        const approved = seq.approved_revision !== null && seq.approved_revision === seq.revision;
        const decision = decideTransition(seq.status, status, approved);
        if ('error' in decision) {
          const detail: Record<string, unknown> = { currentStatus: seq.status };
          if (decision.error === 'sequence_approval_required') Object.assign(detail, { revision: seq.revision, approvedRevision: seq.approved_revision });
          throw conflict(decision.error, CONFLICT_MESSAGES[decision.error], detail);
        }
        if (seq.status !== decision.to) await repo.updateSequenceStatus(trx, workspaceId, sequenceId, decision.to, clock.now());
        return { ok: true as const, sequenceId: seq.id, previousStatus: seq.status as SettableStatus, status: decision.to };
      },
    );
  }

  return { listSequences, getSequenceForReview, setStatus };
}

export type SequencesService = ReturnType<typeof createSequencesService>;
