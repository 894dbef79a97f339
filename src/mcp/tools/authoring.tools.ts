import { Type, type Static, type TSchema } from 'typebox';
import {
  ApproveSequenceInput,
  AuthoringStep,
  MAX_STEPS,
  CreatePlayInput,
  CreateSequenceInput,
  EditPlayInput,
  PlayResult,
  ReplaceStepsInput,
  SequenceResult,
  SetPlayReviewApiInput,
  SetPlayStatusInput,
  type AuthoringService,
  type AuthoringStepInput,
} from '../../modules/authoring/index.js';
import { defineTool } from './types.js';

type S = { authoring: AuthoringService };

const SAFETY = 'Safety: contacts a prospect: no. Never sends, enrolls or changes a sequence status; dryRun: true checks everything and saves nothing.';

// A step as an agent may write it (docs/mcp.md "Steps"): the spec's step object, where what can be inferred may be left
// out. index defaults to the step's position; actions to []; variants and tool to null (no step kind needs a tool:
// nothing reads it); subject to null on every kind but email (only an e-mail has a subject line, so an email step
// must still give one, null included). The service then gets the complete step and checks it as before.
const step = AuthoringStep.properties;

/**
 * A property made optional with its default and its own description. TypeBox's nullable union keeps the description on
 * its non-null branch (compact-schema.ts joins the two), so that is where it is replaced.
 */
function optional<T extends TSchema>(schema: T, description: string, extra: Record<string, unknown> = {}) {
  const { anyOf } = schema as { anyOf?: Record<string, unknown>[] };
  const described: T = anyOf ? { ...schema, anyOf: anyOf.map((b) => (b.type === 'null' ? b : { ...b, description })) } : { ...schema, description };
  return Type.Optional<T>({ ...described, ...extra });
}

/** What every step of both tools says; create_sequence also explains message and the step rules. */
function toolStep(detailed: boolean) {
  return Type.Object(
    {
      index: optional(step.index, 'default: its position'),
      kind: step.kind,
      delayDays: step.delayDays,
      subject: optional(step.subject, 'email subject, required on email steps; else default null'),
      message: detailed
        ? step.message
        : { ...step.message, anyOf: [{ ...step.message.anyOf[0], description: 'template, as in create_sequence' }, step.message.anyOf[1]] },
      actions: optional(step.actions, 'default []; e.g. like_last_post', { default: [] }),
      variants: optional(step.variants, 'weighted message variants (A/B arms); default null', { default: null }),
      tool: optional(step.tool, 'default null', { default: null }),
      // Branches (docs/sequences-and-leads.md "Branches"): the same wire form as GET /sequences answers. The condition
      // is sketched here to keep tools/list small; the service checks it against the full schema (Condition).
      id: Type.Optional(Type.String({ maxLength: 40 })),
      next: Type.Optional(
        Type.Array(
          Type.Object(
            {
              if: Type.Object(
                {},
                {
                  additionalProperties: true,
                  ...(detailed && {
                    description: 'e.g. {"accepted":false} {"replied":true,"intent":"negative"} {"hasAddress":"email"} {"allowed":false} {"split":30}',
                  }),
                },
              ),
              withinDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 365 })),
              goto: Type.String({ maxLength: 40 }),
            },
            { additionalProperties: false },
          ),
          { maxItems: 10, ...(detailed && { description: 'edges; first holding wins; goto: step id, goal, exit' }) },
        ),
      ),
      else: Type.Optional(Type.String({ maxLength: 40 })),
    },
    {
      additionalProperties: false,
      ...(detailed && {
        description:
          'message, email, x_dm and instagram_dm steps carry exactly one of message or variants; other kinds at most one; engage ' +
          'and x_engage need at least one action.',
      }),
      if: { properties: { kind: { const: 'email' } }, required: ['kind'] },
      then: { required: ['subject'] },
    },
  );
}

/** The complete steps the service takes: what an agent left out, inferred (see toolStep). */
function completeSteps(steps: Static<ReturnType<typeof toolStep>>[]): AuthoringStepInput[] {
  return steps.map((s, i) => ({
    index: s.index ?? i,
    kind: s.kind,
    delayDays: s.delayDays,
    subject: s.subject ?? null,
    message: s.message,
    actions: s.actions ?? [],
    variants: s.variants ?? null,
    tool: s.tool ?? null,
    ...(s.id !== undefined && { id: s.id }),
    ...(s.next !== undefined && { next: s.next as AuthoringStepInput['next'] }),
    ...(s.else !== undefined && { else: s.else }),
  }));
}

const CreateInput = Type.Object(
  {
    ...CreateSequenceInput.properties,
    steps: Type.Optional(Type.Array(toolStep(true), { maxItems: MAX_STEPS, description: 'optional; an empty draft can be filled later' })),
  },
  { additionalProperties: false },
);
const ReplaceInput = Type.Object(
  { ...ReplaceStepsInput.properties, steps: Type.Array(toolStep(false), { minItems: 1, maxItems: MAX_STEPS }) },
  { additionalProperties: false },
);

export const authoringTools = [
  defineTool<S, typeof CreateInput>({
    name: 'create_sequence',
    action: 'drafts.write',
    title: 'Create a sequence (draft)',
    description:
      'Creates an unapproved draft at revision 1, optionally with steps (kind, delayDays, message; the rest has defaults; id, ' +
      'next and else make it branch). 400 invalid_steps lists every problem. Next: forecast_sequence, approve_sequence, ' +
      `set_sequence_status active. ${SAFETY}`,
    input: CreateInput,
    output: SequenceResult,
    dryRun: 'service',
    contactsProspects: false,
    readOnly: false,
    additive: true,
    run: ({ services, auth }, { steps, ...args }) =>
      services.authoring.createSequence(auth.workspaceId, { ...args, ...(steps && { steps: completeSteps(steps) }) }),
  }),
  defineTool<S, typeof ReplaceInput>({
    name: 'replace_sequence_steps',
    action: 'drafts.write',
    title: 'Replace the steps of a draft sequence',
    description:
      'Replaces all steps of a draft (revision + 1, unapproved). 409 sequence_not_draft when active or paused (set_sequence_status ' +
      'draft first), archived_sequence_is_read_only, stale_sequence_revision; 400 invalid_steps lists every problem. Identical ' +
      'steps: changed false. ' +
      SAFETY,
    input: ReplaceInput,
    output: SequenceResult,
    dryRun: 'service',
    contactsProspects: false,
    readOnly: false,
    run: ({ services, auth }, { sequenceId, steps, ...args }) =>
      services.authoring.replaceSteps(auth.workspaceId, sequenceId, { ...args, steps: completeSteps(steps) }),
  }),
  defineTool<S, typeof ApproveSequenceInput>({
    name: 'approve_sequence',
    action: 'sequences.approve',
    title: 'Approve an exact sequence revision',
    description:
      'Approves expectedRevision, which must be the current one (409 stale_sequence_revision with currentRevision); 409 ' +
      'sequence_has_no_steps, archived_sequence_is_read_only, no_sender_for_channel. Never changes the status: a draft still ' +
      `needs set_sequence_status active. ${SAFETY}`,
    input: ApproveSequenceInput,
    output: SequenceResult,
    dryRun: 'service',
    contactsProspects: false,
    readOnly: false,
    idempotent: true,
    run: ({ services, auth }, { sequenceId, ...args }) => services.authoring.approveSequence(auth.workspaceId, sequenceId, args),
  }),
  defineTool<S, typeof CreatePlayInput>({
    name: 'create_play',
    action: 'drafts.write',
    title: 'Create a Play',
    description:
      'Creates an active Play at revision 1: kind followers (who follow the account), the sequence its leads go to, the connected ' +
      'X account (accountUserId: list_x_accounts), manual review (default) or autopilot, the review API (default on). 404 ' +
      `sequence not found; 409 archived_sequence_is_read_only, account_not_connected, sequence_has_no_step_for_play. ${SAFETY}`,
    input: CreatePlayInput,
    output: PlayResult,
    dryRun: 'service',
    contactsProspects: false,
    readOnly: false,
    additive: true,
    run: ({ services, auth }, args) => services.authoring.createPlay(auth.workspaceId, args),
  }),
  defineTool<S, typeof EditPlayInput>({
    name: 'edit_play',
    action: 'drafts.write',
    title: 'Edit a Play',
    description:
      'Changes any of name, sequenceId, accountUserId, autopilot; the revision goes up when something changes. 409 ' +
      'stale_play_revision (with currentRevision), play_archived. Enrolled leads keep their sequence. ' +
      SAFETY,
    input: EditPlayInput,
    output: PlayResult,
    dryRun: 'service',
    contactsProspects: false,
    readOnly: false,
    run: ({ services, auth }, { playId, ...args }) => services.authoring.editPlay(auth.workspaceId, playId, args),
  }),
  defineTool<S, typeof SetPlayStatusInput>({
    name: 'set_play_status',
    action: 'plays.set_status',
    title: 'Set a Play status',
    description:
      'Sets active, paused or archived (final: later changes answer 409 play_archived); revision + 1. 409 ' +
      `stale_play_revision. The sequence is not touched. ${SAFETY}`,
    input: SetPlayStatusInput,
    output: PlayResult,
    dryRun: 'service',
    contactsProspects: false,
    readOnly: false,
    run: ({ services, auth }, { playId, ...args }) => services.authoring.setPlayStatus(auth.workspaceId, playId, args),
  }),
  defineTool<S, typeof SetPlayReviewApiInput>({
    name: 'set_play_review_api',
    action: 'plays.set_status',
    title: 'Enable or disable a Play’s review API',
    description:
      'Turns candidate review, import, lookup and enrollment through the API on or off (off: they answer 404); revision + 1. ' +
      `409 stale_play_revision, play_archived. ${SAFETY}`,
    input: SetPlayReviewApiInput,
    output: PlayResult,
    dryRun: 'service',
    contactsProspects: false,
    readOnly: false,
    run: ({ services, auth }, { playId, ...args }) => services.authoring.setPlayReviewApi(auth.workspaceId, playId, args),
  }),
];
