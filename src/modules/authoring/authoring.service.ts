import { Type } from 'typebox';
import { storedSteps } from '../../domain/stored-steps.js';
import type { Database } from '../../db/database.js';
import type { SequenceStepRow } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { rollbackIfDryRun } from '../../lib/dry-run.js';
import { isUuid, newId } from '../../lib/ids.js';
import { badRequest, conflict, notFound } from '../../lib/errors.js';
import { compileStrict } from '../../app/validation.js';
import { renderTemplate, templateProblems, type TemplateLead } from '../../domain/templates.js';
// One lock per row for every writer: status changes and authoring edits of a sequence lock it the same way, and a
// Play's edit lock is defined next to the lock its imports and enrollments take.
import { lockPlayForEdit } from '../plays/index.js';
import { channelsWithoutSender, lockSequence as lockSequenceRow, lockSequenceForShare, requiredChannels, toStep } from '../sequences/index.js';
import { isXStepKind } from '../../domain/admission.js';
import type { Config } from '../../config/config.js';
import { iso } from '../../domain/iso.js';
import { toPlayView } from '../../domain/play-view.js';
import { ENGAGE_KINDS, MESSAGE_KINDS, PLAY_STATUSES, channelName, inWords, type PlayStatus } from '../../domain/vocabulary.js';
import * as repo from './authoring.repository.js';
import { canonicalCondition, graphProblems, type BranchStep } from '../../domain/branches.js';
import { AuthoringStep, MAX_STEPS, PLAY_KINDS, type AuthoringStepInput } from './authoring.schemas.js';

export interface CreateSequenceArgs {
  name: string;
  steps?: AuthoringStepInput[];
  /** Send each step in the lead's own sending hours (docs/engine.md); absent: false. */
  sendInLeadHours?: boolean;
  dryRun?: boolean;
}
export interface ReplaceStepsArgs {
  expectedRevision: number;
  steps: AuthoringStepInput[];
  /** Absent: unchanged. A change is a new revision, like a change of steps. */
  sendInLeadHours?: boolean;
  dryRun?: boolean;
}
export interface ApproveArgs {
  expectedRevision: number;
  dryRun?: boolean;
}
export interface CreatePlayArgs {
  name: string;
  kind?: (typeof PLAY_KINDS)[number];
  sequenceId: string;
  accountUserId: string;
  autopilot?: boolean;
  reviewApiEnabled?: boolean;
  dryRun?: boolean;
}
export interface EditPlayArgs {
  expectedRevision: number;
  name?: string;
  sequenceId?: string;
  accountUserId?: string;
  autopilot?: boolean;
  dryRun?: boolean;
}

/** A step's texts to render for one lead: what the console's Preview shows before anything is saved. */
export interface PreviewStepArgs {
  leadId: string;
  subject: string | null;
  message: string | null;
  variants: { key: string; messageTmpl: string }[] | null;
}

export function toAuthoredSequence(row: repo.SequenceRow) {
  const steps = storedSteps(row.steps).map((s, i) => toStep(s, i));
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    revision: row.revision,
    approvedRevision: row.approved_revision,
    approvedAt: iso(row.approved_at),
    approved: row.approved_revision !== null && row.approved_revision === row.revision,
    channels: row.channels ?? [],
    steps,
    sendInLeadHours: row.send_in_lead_hours,
  };
}

/** The spec's Play object plus `kind`, which only authoring answers. */
export function toAuthoredPlay(row: repo.PlayRow) {
  return { ...toPlayView(row), kind: row.kind };
}

const stepsValidator = compileStrict(Type.Array(AuthoringStep, { maxItems: MAX_STEPS }));
const messageKinds = new Set<string>(MESSAGE_KINDS);
const engageKinds = new Set<string>(ENGAGE_KINDS);

/**
 * The rules a JSON Schema cannot say on its own; every problem is listed so an agent can fix them in one go. Step texts
 * (message, subject, each variant) go through templateProblems (domain/templates.ts, issue 39 §3): an unknown variable
 * or another tool's placeholder syntax is refused here, naming the token and what to write instead, because at send
 * time it would make the step skip for every lead. World seeding runs the same check (world/planners/sequences.ts).
 */
export function stepProblems(steps: AuthoringStepInput[]): string[] {
  if (!stepsValidator(steps)) {
    const e = stepsValidator.errors?.[0];
    return [`steps${e?.instancePath ?? ''} ${e?.message ?? 'is invalid'}`];
  }
  const problems: string[] = [];
  const template = (where: string, text: string | null) => {
    if (text === null) return;
    for (const p of templateProblems(text)) problems.push(`${where}: ${p.message}`);
  };
  steps.forEach((s, i) => {
    const at = `steps[${i}]`;
    if (s.index !== i) problems.push(`${at}.index must be ${i}: steps are numbered 0, 1, 2, … in order`);
    const hasMessage = s.message !== null;
    const hasVariants = s.variants !== null;
    if (messageKinds.has(s.kind) && hasMessage === hasVariants) {
      problems.push(`${at}: a ${s.kind} step carries exactly one of message or variants`);
    } else if (hasMessage && hasVariants) {
      problems.push(`${at}: a step carries message or variants, not both`);
    }
    if (engageKinds.has(s.kind) && s.actions.length === 0) problems.push(`${at}: a ${s.kind} step needs at least one action`);
    if (s.variants) {
      const keys = s.variants.map((v) => v.key);
      if (new Set(keys).size !== keys.length) problems.push(`${at}.variants: keys must be unique`);
      s.variants.forEach((v, j) => template(`${at}.variants[${j}].messageTmpl`, v.messageTmpl));
    }
    template(`${at}.message`, s.message);
    template(`${at}.subject`, s.subject);
  });
  // A branching sequence's graph (domain/branches.ts): targets, reachability, cycles, conditions that cannot hold.
  if (problems.length === 0) problems.push(...graphProblems(steps as unknown as BranchStep[]));
  return problems;
}

function assertValidSteps(steps: AuthoringStepInput[]) {
  const problems = stepProblems(steps);
  if (problems.length > 0) throw badRequest('invalid_steps', problems.join('; '), { problems });
}

/** The stored row: exactly the spec's step fields, in the spec's order, nothing else. */
function toStepRow(s: AuthoringStepInput): SequenceStepRow {
  return {
    index: s.index,
    kind: s.kind,
    delayDays: s.delayDays,
    subject: s.subject,
    message: s.message,
    actions: s.actions.map((a) => ({ type: a.type, count: a.count, reaction: a.reaction })),
    variants: s.variants ? s.variants.map((v) => ({ key: v.key, weight: v.weight, messageTmpl: v.messageTmpl })) : null,
    tool: s.tool,
    // Branches (x-extensions): kept only when the author wrote them, so a linear step is stored as before.
    ...(s.id !== undefined && { id: s.id }),
    ...(s.next !== undefined &&
      s.next.length > 0 && {
        next: s.next.map((e) => ({ if: canonicalCondition(e.if), ...(e.withinDays !== undefined && { withinDays: e.withinDays }), goto: e.goto })),
      }),
    ...(s.else !== undefined && { else: s.else }),
  };
}

function cleanName(name: string) {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > 200) throw badRequest('invalid_name', 'name must be 1 to 200 characters');
  return trimmed;
}

const staleSequence = (seq: repo.SequenceRow, expected: number) =>
  conflict('stale_sequence_revision', `the sequence is at revision ${seq.revision}, not ${expected}`, {
    currentRevision: seq.revision,
    approvedRevision: seq.approved_revision,
  });
const archivedSequence = () => conflict('archived_sequence_is_read_only', 'an archived sequence cannot be edited or approved');
const stalePlay = (play: repo.PlayRow, expected: number) =>
  conflict('stale_play_revision', `the Play is at revision ${play.revision}, not ${expected}`, { currentRevision: play.revision });
const archivedPlay = (play: repo.PlayRow) => conflict('play_archived', 'an archived Play is read-only', { playId: play.id });

const senderHint = (c: string) =>
  c === 'email' ? 'add a mailbox (Accounts → Add mailbox) or connect a messaging account' : c === 'x' ? 'connect an X account' : 'connect a LinkedIn account';

export function createAuthoringService(deps: { db: Database; clock: Clock; config: Pick<Config, 'engine'> }) {
  const { db, clock } = deps;

  async function write<T extends object>(dryRun: boolean | undefined, fn: (trx: Database) => Promise<T>): Promise<T & { dryRun: boolean }> {
    const result = await rollbackIfDryRun(dryRun, (work) => db.transaction().execute(work), fn);
    return { ...result, dryRun: dryRun === true };
  }

  async function lockSequence(trx: Database, workspaceId: string, sequenceId: string) {
    const seq = isUuid(sequenceId) ? await lockSequenceRow(trx, workspaceId, sequenceId) : undefined;
    if (!seq) throw notFound('sequence');
    return seq;
  }

  async function lockPlay(trx: Database, workspaceId: string, playId: string) {
    const play = isUuid(playId) ? await lockPlayForEdit(trx, workspaceId, playId) : undefined;
    if (!play) throw notFound('play');
    return play;
  }

  /** The sequence a Play points at: the workspace's own and not archived (share-locked until the Play is saved). */
  async function requirePlayableSequence(trx: Database, workspaceId: string, sequenceId: string) {
    const seq = isUuid(sequenceId) ? await lockSequenceForShare(trx, workspaceId, sequenceId) : undefined;
    if (!seq) throw notFound('sequence');
    if (seq.status === 'archived') throw archivedSequence();
    // A Play's candidates are X accounts: a sequence with no X step could send to none of them (docs/engine.md).
    if (!storedSteps(seq.steps).some((st) => isXStepKind(String(st.kind)))) {
      throw conflict(
        'sequence_has_no_step_for_play',
        `sequence “${seq.name}” has no X step (x_dm or x_engage); a Play's leads are X accounts and could take none of its steps`,
        { sequenceId: seq.id },
      );
    }
  }

  async function requireConnectedAccount(trx: Database, workspaceId: string, userId: string) {
    if (!(await repo.lockXAccountShared(trx, workspaceId, userId))) {
      throw conflict('account_not_connected', 'accountUserId is not a connected X account of this workspace', { accountUserId: userId });
    }
  }

  async function createSequence(workspaceId: string, input: CreateSequenceArgs) {
    const name = cleanName(input.name);
    const steps = input.steps ?? [];
    assertValidSteps(steps);
    const rows = steps.map(toStepRow);
    return write(input.dryRun, async (trx) => {
      const row = await repo.insertSequence(trx, {
        id: newId(),
        workspace_id: workspaceId,
        name,
        steps: rows,
        channels: requiredChannels([], rows),
        sendInLeadHours: input.sendInLeadHours === true,
        now: clock.now(),
      });
      return { sequence: toAuthoredSequence(row), changed: true };
    });
  }

  /**
   * Only a draft is edited: the spec makes "drafting" the way to make a sequence editable, and refusing
   * active and paused ones means authoring can never alter what a running sequence sends.
   */
  async function replaceSteps(workspaceId: string, sequenceId: string, input: ReplaceStepsArgs) {
    assertValidSteps(input.steps);
    if (input.steps.length === 0) throw badRequest('invalid_steps', 'a sequence needs at least one step', { problems: ['steps must not be empty'] });
    const rows = input.steps.map(toStepRow);
    return write(input.dryRun, async (trx) => {
      const seq = await lockSequence(trx, workspaceId, sequenceId);
      if (seq.status === 'archived') throw archivedSequence();
      if (seq.status !== 'draft') {
        throw conflict('sequence_not_draft', 'only a draft sequence can be edited; set its status to draft first (PATCH /sequences/{id}/status)', {
          currentStatus: seq.status,
        });
      }
      if (seq.revision !== input.expectedRevision) throw staleSequence(seq, input.expectedRevision);
      const current = storedSteps(seq.steps).map((s, i) => toStep(s, i));
      const sendInLeadHours = input.sendInLeadHours ?? seq.send_in_lead_hours;
      if (JSON.stringify(current) === JSON.stringify(rows) && sendInLeadHours === seq.send_in_lead_hours)
        return { sequence: toAuthoredSequence(seq), changed: false };
      const row = await repo.updateSequenceSteps(trx, workspaceId, sequenceId, {
        steps: rows,
        channels: requiredChannels([], rows),
        sendInLeadHours,
        revision: seq.revision + 1,
        now: clock.now(),
      });
      return { sequence: toAuthoredSequence(row), changed: true };
    });
  }

  /** Records the exact revision approved; the status is left alone, so approving never starts sending by itself. */
  async function approveSequence(workspaceId: string, sequenceId: string, input: ApproveArgs) {
    return write(input.dryRun, async (trx) => {
      const seq = await lockSequence(trx, workspaceId, sequenceId);
      if (seq.status === 'archived') throw archivedSequence();
      if (seq.revision !== input.expectedRevision) throw staleSequence(seq, input.expectedRevision);
      if (storedSteps(seq.steps).length === 0) {
        throw conflict('sequence_has_no_steps', 'a sequence without steps cannot be approved', { currentRevision: seq.revision });
      }
      if (seq.approved_revision === seq.revision) return { sequence: toAuthoredSequence(seq), changed: false };
      // A channel of the steps that no sender of the workspace can carry would hold every lead on it: refused now,
      // while a person can still add the sender (docs/engine.md "A lead without a sender").
      const missing = await channelsWithoutSender({ db: trx, clock, config: deps.config }, workspaceId, {
        channels: seq.channels ?? [],
        steps: storedSteps(seq.steps).map((st) => ({ kind: String(st.kind) })),
      });
      if (missing.length > 0) {
        throw conflict(
          'no_sender_for_channel',
          `no sender in this workspace for ${missing.map(channelName).join(' and ')}: ${missing.map(senderHint).join('; ')}`,
          {
            channels: missing,
          },
        );
      }
      const row = await repo.approveSequence(trx, workspaceId, sequenceId, seq.revision, clock.now());
      return { sequence: toAuthoredSequence(row), changed: true };
    });
  }

  async function createPlay(workspaceId: string, input: CreatePlayArgs) {
    const name = cleanName(input.name);
    const kind = input.kind ?? 'followers';
    if (!(PLAY_KINDS as readonly string[]).includes(kind)) throw badRequest('invalid_play_kind', `kind must be one of ${PLAY_KINDS.join(', ')}`);
    return write(input.dryRun, async (trx) => {
      await requirePlayableSequence(trx, workspaceId, input.sequenceId);
      await requireConnectedAccount(trx, workspaceId, input.accountUserId);
      const row = await repo.insertPlay(trx, {
        id: newId(),
        workspace_id: workspaceId,
        name,
        kind,
        sequence_id: input.sequenceId.toLowerCase(),
        account_user_id: input.accountUserId,
        autopilot: input.autopilot ?? false,
        review_api_enabled: input.reviewApiEnabled ?? true,
        now: clock.now(),
      });
      return { play: toAuthoredPlay(row), changed: true };
    });
  }

  /**
   * Locks the Play, refuses archived and stale ones, and bumps the revision only when something changes,
   * so an import or enrollment planned against the old revision fails instead of landing on the new setup.
   */
  async function updatePlay(
    workspaceId: string,
    playId: string,
    expectedRevision: number,
    dryRun: boolean | undefined,
    plan: (trx: Database, play: repo.PlayRow) => Promise<repo.PlayPatch>,
  ) {
    return write(dryRun, async (trx) => {
      const play = await lockPlay(trx, workspaceId, playId);
      if (play.status === 'archived') throw archivedPlay(play);
      if (play.revision !== expectedRevision) throw stalePlay(play, expectedRevision);
      const patch = await plan(trx, play);
      const changes = Object.fromEntries(
        Object.entries(patch).filter(([k, v]) => v !== undefined && v !== (play as Record<string, unknown>)[k]),
      ) as repo.PlayPatch;
      if (Object.keys(changes).length === 0) return { play: toAuthoredPlay(play), changed: false };
      const row = await repo.updatePlay(trx, workspaceId, playId, { ...changes, revision: play.revision + 1, now: clock.now() });
      return { play: toAuthoredPlay(row), changed: true };
    });
  }

  async function editPlay(workspaceId: string, playId: string, input: EditPlayArgs) {
    if (input.name === undefined && input.sequenceId === undefined && input.accountUserId === undefined && input.autopilot === undefined) {
      throw badRequest('nothing_to_change', 'give at least one of name, sequenceId, accountUserId, autopilot');
    }
    const name = input.name === undefined ? undefined : cleanName(input.name);
    return updatePlay(workspaceId, playId, input.expectedRevision, input.dryRun, async (trx, play) => {
      const sequenceId = input.sequenceId?.toLowerCase();
      if (sequenceId !== undefined && sequenceId !== play.sequence_id) await requirePlayableSequence(trx, workspaceId, sequenceId);
      if (input.accountUserId !== undefined && input.accountUserId !== play.account_user_id) {
        await requireConnectedAccount(trx, workspaceId, input.accountUserId);
      }
      return { name, sequence_id: sequenceId, account_user_id: input.accountUserId, autopilot: input.autopilot };
    });
  }

  async function setPlayStatus(workspaceId: string, playId: string, input: { expectedRevision: number; status: PlayStatus; dryRun?: boolean }) {
    if (!PLAY_STATUSES.includes(input.status)) throw badRequest('invalid_status', `status must be ${inWords(PLAY_STATUSES)}`);
    return updatePlay(workspaceId, playId, input.expectedRevision, input.dryRun, async () => ({ status: input.status }));
  }

  async function setPlayReviewApi(workspaceId: string, playId: string, input: { expectedRevision: number; enabled: boolean; dryRun?: boolean }) {
    return updatePlay(workspaceId, playId, input.expectedRevision, input.dryRun, async () => ({ review_api_enabled: input.enabled }));
  }

  /**
   * Renders a step's subject, message and variants for one lead of the workspace, exactly as the engine would at
   * send time: an unknown placeholder, a value this lead lacks (without a fallback), or a placeholder-like token left
   * in the text (`broken_placeholder`: another tool's syntax, or the lead's own data holding one) comes back as the
   * failure.
   */
  async function previewStep(workspaceId: string, input: PreviewStepArgs) {
    const lead = isUuid(input.leadId) ? await repo.findLeadForPreview(db, workspaceId, input.leadId.toLowerCase()) : undefined;
    if (!lead) throw notFound('lead');
    const fields: TemplateLead = {
      person: lead.person,
      company: lead.company,
      title: lead.title,
      email: lead.email,
      username: lead.username,
      linkedinUrl: lead.linkedin_url,
      custom: lead.custom,
    };
    const render = (text: string | null) => (text === null ? null : renderTemplate(text, fields));
    return {
      lead: { id: lead.id, person: lead.person },
      subject: render(input.subject),
      message: render(input.message),
      variants: (input.variants ?? []).map((v) => ({ key: v.key, result: renderTemplate(v.messageTmpl, fields) })),
    };
  }

  return { createSequence, replaceSteps, approveSequence, createPlay, editPlay, setPlayStatus, setPlayReviewApi, previewStep };
}

export type AuthoringService = ReturnType<typeof createAuthoringService>;
