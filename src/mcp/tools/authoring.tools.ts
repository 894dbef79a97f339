import {
  ApproveSequenceInput,
  CreatePlayInput,
  CreateSequenceInput,
  EditPlayInput,
  PlayResult,
  ReplaceStepsInput,
  SequenceResult,
  SetPlayReviewApiInput,
  SetPlayStatusInput,
  type AuthoringService,
} from '../../modules/authoring/index.js';
import { defineTool } from './types.js';

type S = { authoring: AuthoringService };

const SAFETY =
  'Safety: contacts a prospect: no. Authoring never sends, never enrolls and never changes a sequence status; ' +
  'with dryRun: true it runs every check, answers what would be saved and saves nothing.';

export const authoringTools = [
  defineTool<S, typeof CreateSequenceInput>({
    name: 'create_sequence',
    title: 'Create a sequence (draft)',
    description:
      'Creates a sequence as a draft at revision 1, unapproved, optionally with its steps. Every step gives all of index, kind, ' +
      'delayDays, subject, message, actions, variants, tool (null where unused). Next: approve_sequence, then activate it with ' +
      `set_sequence_status when ready. ${SAFETY}`,
    input: CreateSequenceInput,
    output: SequenceResult,
    dryRun: 'service',
    contactsProspects: false,
    readOnly: false,
    additive: true,
    run: ({ services, auth }, args) => services.authoring.createSequence(auth.workspaceId, args),
  }),
  defineTool<S, typeof ReplaceStepsInput>({
    name: 'replace_sequence_steps',
    title: 'Replace the steps of a draft sequence',
    description:
      'Replaces all steps of a draft sequence and bumps its revision; the new revision is unapproved. Only drafts are editable: an ' +
      'active or paused sequence answers 409 sequence_not_draft (return it to draft with set_sequence_status first), an archived ' +
      'one 409 archived_sequence_is_read_only. expectedRevision must be the current revision (409 stale_sequence_revision). ' +
      'Invalid steps answer 400 invalid_steps listing every problem. Identical steps change nothing (changed: false). ' +
      SAFETY,
    input: ReplaceStepsInput,
    output: SequenceResult,
    dryRun: 'service',
    contactsProspects: false,
    readOnly: false,
    run: ({ services, auth }, { sequenceId, ...args }) => services.authoring.replaceSteps(auth.workspaceId, sequenceId, args),
  }),
  defineTool<S, typeof ApproveSequenceInput>({
    name: 'approve_sequence',
    title: 'Approve an exact sequence revision',
    description:
      'Records expectedRevision as the approved revision (approvedRevision, approvedAt). The revision must be the current one ' +
      '(409 stale_sequence_revision with currentRevision otherwise); a sequence without steps answers 409 sequence_has_no_steps; ' +
      'archived 409 archived_sequence_is_read_only. Approving the already approved revision changes nothing. Approval never ' +
      `changes the status: an approved draft still needs set_sequence_status active to run. ${SAFETY}`,
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
    title: 'Create a Play',
    description:
      'Creates an active Play at revision 1: kind followers (people who follow the connected account), the sequence enrolled leads ' +
      'go to, the connected X account (accountUserId, see list_x_accounts), manual review (autopilot false, default) or autopilot, ' +
      'and the review API (default on). 404 sequence not found for a sequence outside the workspace, 409 ' +
      `archived_sequence_is_read_only, 409 account_not_connected. ${SAFETY}`,
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
    title: 'Edit a Play',
    description:
      'Changes any of name, sequenceId, accountUserId, autopilot and bumps the Play revision (only when something changes). ' +
      'expectedRevision must be the current revision (409 stale_play_revision with currentRevision); an archived Play answers ' +
      '409 play_archived. Leads already enrolled keep their sequence. The kind is fixed at creation. ' +
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
    title: 'Set a Play status',
    description:
      'Sets active, paused or archived and bumps the Play revision. archived is final: every later change answers 409 ' +
      'play_archived. expectedRevision must be the current revision (409 stale_play_revision). The Play’s sequence is not ' +
      `touched. ${SAFETY}`,
    input: SetPlayStatusInput,
    output: PlayResult,
    dryRun: 'service',
    contactsProspects: false,
    readOnly: false,
    run: ({ services, auth }, { playId, ...args }) => services.authoring.setPlayStatus(auth.workspaceId, playId, args),
  }),
  defineTool<S, typeof SetPlayReviewApiInput>({
    name: 'set_play_review_api',
    title: 'Enable or disable a Play’s review API',
    description:
      'Turns candidate review, import, lookup and enrollment through the API on or off and bumps the Play revision. With it off, ' +
      'those operations answer 404 play not found. expectedRevision must be the current revision (409 stale_play_revision); ' +
      `archived Plays answer 409 play_archived. ${SAFETY}`,
    input: SetPlayReviewApiInput,
    output: PlayResult,
    dryRun: 'service',
    contactsProspects: false,
    readOnly: false,
    run: ({ services, auth }, { playId, ...args }) => services.authoring.setPlayReviewApi(auth.workspaceId, playId, args),
  }),
];
