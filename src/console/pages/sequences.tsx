import { BranchOutline, ForecastSection, type ForecastView } from './sequence-branches.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from '../../app/types.js';
import { AppError, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { ExecutionBlockReason, Step, StepChange } from '../../modules/sequences/index.js';
import type { ConsoleDeps } from '../deps.js';
import { CsrfField, may, NeedsRole, PostButton, Table, type PageContext } from '../layout.js';
import { pageContext, sendPage } from '../render.js';
import { channelName } from '../../domain/vocabulary.js';
import { Badge, EmptyState, NoticeBox, takeNotice, plural, PrimaryLink, When, redirectWithNotice, type Notice } from '../ui.js';
import { BackToSequences, EditorFormBody as FormBody, leadOptions, refusalOf, runEditorOp, StepsEditor, type PreviewView } from './sequence-editor.js';
import { editorFromSteps, readEditorForm, readOp, toAuthoringSteps, type EditorState } from './sequence-form.js';

type StatusForm = { status?: string; back?: string };
type ApproveForm = { revision?: string };

/**
 * The status changes a person can ask for, labelled by what they do. Only the spec's "Sequence status" table's
 * transitions are offered: Activate needs the current revision approved (an unapproved one offers Approve instead),
 * Pause is for an active sequence, Back to draft for an active or paused one; an archived sequence offers nothing.
 * The service applies the same table, so a stale page's button is still refused there.
 */
const STATUS_ACTIONS = [
  { status: 'active', label: 'Activate', allowed: (s: SequenceState) => s.status !== 'active' && isApproved(s) },
  { status: 'paused', label: 'Pause', allowed: (s: SequenceState) => s.status === 'active' },
  { status: 'draft', label: 'Back to draft', allowed: (s: SequenceState) => s.status === 'active' || s.status === 'paused' },
] as const;

interface SequenceState {
  status: string;
  revision: number;
  approvedRevision: number | null;
}
const isApproved = (s: SequenceState) => s.approvedRevision !== null && s.approvedRevision === s.revision;
const allowedActions = (s: SequenceState) => (s.status === 'archived' ? [] : STATUS_ACTIONS.filter((a) => a.allowed(s)));

const BLOCK_REASON_TEXT: Record<ExecutionBlockReason, string> = {
  sequence_archived: 'archived',
  sequence_approval_required: 'current revision not approved',
  sequence_draft: 'draft',
  sequence_paused: 'paused',
  billing_inactive: 'billing inactive',
  energy_exhausted: 'energy exhausted',
  no_sending_account: 'no connected sending account',
  x_channel_disabled: 'X channel disabled',
};

function describeStep(step: Step): string {
  const parts = [`${step.kind}`, step.delayDays > 0 ? `after ${step.delayDays} day${step.delayDays === 1 ? '' : 's'}` : 'at once'];
  if (step.subject) parts.push(`subject “${step.subject}”`);
  if (step.message) parts.push(`“${step.message}”`);
  if (step.actions.length) parts.push(step.actions.map((a) => `${a.type}${a.count !== null ? ` ×${a.count}` : ''}`).join(', '));
  if (step.variants?.length) parts.push(`${step.variants.length} variants (${step.variants.map((v) => `${v.key} ${v.weight}`).join(', ')})`);
  if (step.tool) parts.push(`tool ${step.tool}`);
  return parts.join(' · ');
}

const CHANGE_LABEL: Record<StepChange['change'], string> = { unchanged: 'Unchanged', changed: 'Changed', added: 'Added', removed: 'Removed' };

const STALE_HINT =
  'It changed since this page was drawn (an agent or another person edited it). Nothing was saved; open the sequence again to see the current steps.';

type SequenceForReview = Awaited<ReturnType<ConsoleDeps['services']['sequences']['getSequenceForReview']>>;

/** The missing-sender warning, the status and revisions line, and the allowed status changes of one sequence. */
function SequenceSummary(props: { seq: SequenceForReview; csrfToken: string; ctx: PageContext }) {
  const { seq } = props;
  // A channel of its steps with no sender in the workspace: warned here, and approving is refused until it has one.
  const withoutSender = seq.channelsWithoutSender;
  const actions = allowedActions(seq);
  return (
    <>
      {withoutSender.length > 0 ? (
        <p role="note" class="notice notice-warn">
          <span safe>{`No sender in this workspace for ${withoutSender.map(channelName).join(' and ')}: its leads would wait forever. `}</span>
          <a href="/console/accounts">{withoutSender.includes('email') ? 'Add a mailbox on Accounts' : 'Connect an account on Accounts'}</a>
          <span> before approving (approval is refused until then).</span>
        </p>
      ) : (
        ''
      )}
      <p>
        <Badge value={seq.status} />{' '}
        <span safe>{`revision ${seq.revision} · ${seq.approvedRevision === null ? 'never approved' : `approved revision ${seq.approvedRevision}`} `}</span>
        {seq.approvedAt ? <When at={seq.approvedAt} /> : ''}
        <span safe>{` · ${plural(seq.leadCount, 'lead')}`}</span>
        <span safe>{seq.sendInLeadHours ? " · sends in each lead's own hours (when known)" : " · sends in the account's hours"}</span>
      </p>
      {actions.length > 0 && !may(props.ctx, 'sequences.set_status') ? (
        <NeedsRole ctx={props.ctx} action="sequences.set_status" what="Activating or pausing a sequence" />
      ) : actions.length > 0 ? (
        <p>
          {actions.map((a) => (
            <>
              <PostButton
                action={`/console/sequences/${seq.id}/status`}
                csrfToken={props.csrfToken}
                fields={{ status: a.status, back: 'page' }}
                label={a.label}
                ariaLabel={`${a.label} ${seq.name}`}
              />{' '}
            </>
          ))}
        </p>
      ) : (
        ''
      )}
    </>
  );
}

/** The steps of the current revision beside the approved revision's. */
function ChangesSection(props: { seq: SequenceForReview }) {
  const { seq } = props;
  const changed = seq.changes.filter((c) => c.change !== 'unchanged').length;
  return (
    <section aria-labelledby="changes">
      <h2 id="changes" safe>
        {seq.approvedRevision === null
          ? `Steps of revision ${seq.revision} (none approved yet)`
          : isApproved(seq)
            ? `Steps of revision ${seq.revision} (approved)`
            : `Changes since approved revision ${seq.approvedRevision}: ${changed} of ${seq.changes.length} steps`}
      </h2>
      {!seq.approvedStepsKnown ? (
        <p role="note">The steps of the approved revision were not recorded (it was approved before this version kept them); every step is shown as added.</p>
      ) : null}
      <Table
        caption={`Steps of revision ${seq.revision} beside the approved revision`}
        columns={['Step', 'Change', 'Now', 'Approved']}
        items={seq.changes}
        empty={
          <EmptyState title="No step yet">
            <p>{seq.status === 'draft' ? 'Add steps below, then save them.' : 'Put it back to draft to add steps.'}</p>
          </EmptyState>
        }
        row={(c) => (
          <tr class={`change-${c.change}`}>
            <td safe>{String(c.position + 1)}</td>
            <td safe>{CHANGE_LABEL[c.change]}</td>
            <td safe>{'step' in c ? describeStep(c.step) : '—'}</td>
            <td safe>{c.change === 'changed' || c.change === 'removed' ? describeStep(c.approved) : c.change === 'unchanged' ? 'same' : '—'}</td>
          </tr>
        )}
      />
    </section>
  );
}

/** Approve this exact revision, or why it cannot be (archived, already approved, no steps). */
function ApproveSection(props: { seq: SequenceForReview; csrfToken: string; ctx: PageContext }) {
  const { seq } = props;
  if (seq.status === 'archived') return <p>An archived sequence is read-only.</p>;
  if (isApproved(seq)) return '';
  if (seq.steps.length === 0) return <p>A sequence without steps cannot be approved.</p>;
  if (!may(props.ctx, 'sequences.approve')) return <NeedsRole ctx={props.ctx} action="sequences.approve" what={`Approving revision ${seq.revision}`} />;
  return (
    <form method="post" action={`/console/sequences/${seq.id}/approve`}>
      <CsrfField token={props.csrfToken} />
      {/* The exact revision shown: if an agent edits the sequence meanwhile, the service refuses a stale approval. */}
      <input type="hidden" name="revision" value={String(seq.revision)} />
      <button type="submit" class="primary" safe>
        {`Approve revision ${seq.revision}`}
      </button>{' '}
      <span class="muted">Approving never starts sending: Activate does.</span>
    </form>
  );
}

type SequenceListItem = Awaited<ReturnType<ConsoleDeps['services']['sequences']['listSequences']>>[number];

/** The list page: each sequence with its status, revisions, leads, what blocks or holds it, and its status changes. */
function SequencesList(props: { list: SequenceListItem[]; heldText: (id: string) => string; notice: Notice | null; csrfToken: string; canSetStatus: boolean }) {
  const { list, heldText, notice } = props;
  return (
    <>
      <h1>Sequences</h1>
      <NoticeBox notice={notice} />
      <p>
        <PrimaryLink href="/console/sequences/new" label="New sequence" />
      </p>
      <Table
        caption="Sequences of this workspace"
        columns={['Name', 'Status', 'Revision', 'Approved revision', 'Leads', 'Blocked by', 'Actions']}
        items={list}
        empty={
          <EmptyState title="No sequence yet">
            <p>
              <a href="/console/sequences/new">New sequence</a> writes one here; agents can also create them through the API or the agent tools.
            </p>
          </EmptyState>
        }
        row={(s) => (
          <tr>
            <td>
              <a href={`/console/sequences/${s.id}`} safe>
                {s.name}
              </a>
            </td>
            <td>
              <Badge value={s.status} />
            </td>
            <td safe>{String(s.revision)}</td>
            <td safe>{s.approvedRevision === null ? 'never' : String(s.approvedRevision)}</td>
            <td safe>{String(s.leadCount)}</td>
            <td safe>{s.executionBlockReason ? BLOCK_REASON_TEXT[s.executionBlockReason] : heldText(s.id)}</td>
            <td>
              {s.status === 'archived' ? 'read-only' : ''}
              {(props.canSetStatus ? allowedActions(s) : []).map((a) => (
                <PostButton
                  action={`/console/sequences/${s.id}/status`}
                  csrfToken={props.csrfToken}
                  fields={{ status: a.status }}
                  label={a.label}
                  ariaLabel={`${a.label} ${s.name}`}
                />
              ))}
              {s.status !== 'archived' && !isApproved(s) ? (
                // Named without the sequence's name, which names the row's first link already.
                <a href={`/console/sequences/${s.id}`} safe>
                  {`Approve revision ${s.revision}`}
                </a>
              ) : (
                ''
              )}
            </td>
          </tr>
        )}
      />
    </>
  );
}

/**
 * Sequences: the list with status, revisions, lead count and what blocks sending; the allowed status changes; the
 * sequence page with its changes since the approved revision, approval of that exact revision, and (for a draft)
 * the step editor, which saves a new revision through the authoring service, as the agent tools do.
 */
export function sequencesPages(app: AppInstance, deps: ConsoleDeps) {
  const { sequences, authoring } = deps.services;
  const workspaceOf = (req: FastifyRequest) => req.consoleSession!.auth.workspaceId;

  async function renderList(req: FastifyRequest, reply: FastifyReply, notice: Notice | null, status = 200) {
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    const [list, held] = await Promise.all([sequences.listSequences(workspaceOf(req)), deps.services.leads.heldSummary(workspaceOf(req))]);
    // What holds the sequence's due leads when the sequence itself may run (leads.held.ts): "3 held: no_sender_for_channel".
    const heldText = (id: string) => (held.bySequence.get(id) ?? []).map((h) => `${plural(h.count, 'lead')} held: ${h.rule}`).join('; ') || '—';
    return sendPage(reply, ctx, {
      title: 'Sequences',
      nav: 'sequences',
      status,
      body: <SequencesList list={list} heldText={heldText} notice={notice} csrfToken={ctx.csrfToken} canSetStatus={may(ctx, 'sequences.set_status')} />,
    });
  }

  async function renderOne(
    req: FastifyRequest,
    reply: FastifyReply,
    sequenceId: string,
    extra: {
      notice?: Notice | null;
      status?: number;
      editor?: EditorState;
      preview?: PreviewView | null;
      editedRevision?: number;
      forecast?: ForecastView | null;
    } = {},
  ) {
    const [ctx, seq] = await Promise.all([
      pageContext(req, reply, deps.services.consoleSessions),
      sequences.getSequenceForReview(workspaceOf(req), sequenceId),
    ]);
    // The step editor carries each step's branch block (id, edges, else), so a branching draft is edited here too.
    const editable = seq.status === 'draft';
    const leads = editable ? await leadOptions(deps, workspaceOf(req)) : [];
    return sendPage(reply, ctx, {
      title: seq.name,
      nav: 'sequences',
      status: extra.status,
      body: (
        <>
          <BackToSequences />
          <h1 safe>{seq.name}</h1>
          <NoticeBox notice={extra.notice} />
          <SequenceSummary seq={seq} csrfToken={ctx.csrfToken} ctx={ctx} />
          <ChangesSection seq={seq} />
          <ApproveSection seq={seq} csrfToken={ctx.csrfToken} ctx={ctx} />
          <BranchOutline steps={seq.steps} />
          {seq.steps.length > 0 ? (
            <ForecastSection
              sequenceId={seq.id}
              csrfToken={ctx.csrfToken}
              forecast={extra.forecast ?? null}
              stepNames={seq.steps.map((s) => `${s.index}: ${s.kind}${s.id ? ` “${s.id}”` : ''}`)}
            />
          ) : (
            ''
          )}
          {editable ? (
            <section aria-labelledby="edit-steps">
              <h2 id="edit-steps">Edit steps</h2>
              <p>Saving makes a new revision, which needs approval before it is sent.</p>
              <form method="post" action={`/console/sequences/${seq.id}/steps`} class="sequence-form">
                <CsrfField token={ctx.csrfToken} />
                {/* The revision the edits start from: a save on top of someone else's newer revision is refused (409). */}
                <input type="hidden" name="revision" value={String(extra.editedRevision ?? seq.revision)} />
                <StepsEditor
                  state={extra.editor ?? editorFromSteps(seq.name, seq.steps, seq.sendInLeadHours === true)}
                  leads={leads}
                  preview={extra.preview ?? null}
                />
                <p>
                  <button type="submit" name="op" value="save" class="primary">
                    Save steps
                  </button>
                </p>
              </form>
            </section>
          ) : seq.status === 'archived' ? (
            ''
          ) : (
            <p>Only a draft can be edited: “Back to draft” stops it from sending until it is approved and activated again.</p>
          )}
        </>
      ),
    });
  }

  function requireSequenceId(id: string) {
    if (!isUuid(id)) throw notFound('sequence');
    return id.toLowerCase();
  }

  /** A service refusal (409 stale revision, invalid transition) is shown on the page with its status and message. */
  async function attempt(run: () => Promise<FastifyReply>, render: (notice: Notice, status: number) => Promise<FastifyReply>) {
    try {
      return await run();
    } catch (err) {
      const refused = refusalOf(err);
      if (!refused) throw err;
      const stale = err instanceof AppError && err.code === 'stale_sequence_revision';
      return render(stale ? { kind: 'refused', text: `${refused.notice.text}. ${STALE_HINT}` } : refused.notice, refused.status);
    }
  }

  app.get('/console/sequences', { schema: { hide: true } }, async (req, reply) => renderList(req, reply, takeNotice(req, reply)));

  app.get<{ Params: { id: string } }>('/console/sequences/:id', { schema: { hide: true } }, async (req, reply) =>
    renderOne(req, reply, requireSequenceId(req.params.id), { notice: takeNotice(req, reply) }),
  );

  // Preview launch (docs/sequences-and-leads.md "Forecast"): the forecast shown on the sequence's page; nothing changes.
  app.post<{ Params: { id: string }; Body: { days?: string } }>(
    '/console/sequences/:id/forecast',
    { schema: { hide: true, body: FormBody } },
    async (req, reply) => {
      const id = requireSequenceId(req.params.id);
      const days = Math.min(60, Math.max(1, Number.parseInt(req.body.days ?? '14', 10) || 14));
      return attempt(
        async () => renderOne(req, reply, id, { forecast: await deps.services.forecast.forecast(workspaceOf(req), id, { days }) }),
        (notice, status) => renderOne(req, reply, id, { notice, status }),
      );
    },
  );

  app.post<{ Params: { id: string }; Body: StatusForm }>('/console/sequences/:id/status', { schema: { hide: true, body: FormBody } }, async (req, reply) => {
    const id = requireSequenceId(req.params.id);
    const wanted = STATUS_ACTIONS.find((a) => a.status === req.body.status);
    const onPage = req.body.back === 'page';
    return attempt(
      async () => {
        if (!wanted) throw new AppError(400, 'invalid_request', `status must be one of: ${STATUS_ACTIONS.map((a) => a.status).join(', ')}`);
        const done = await sequences.setStatus(workspaceOf(req), id, wanted.status);
        const notice: Notice = { kind: 'done', text: `Status changed from ${done.previousStatus} to ${done.status}.` };
        return onPage ? redirectWithNotice(reply, `/console/sequences/${id}`, notice) : renderList(req, reply, notice);
      },
      (notice, status) => (onPage ? renderOne(req, reply, id, { notice, status }) : renderList(req, reply, notice, status)),
    );
  });

  app.post<{ Params: { id: string }; Body: ApproveForm }>('/console/sequences/:id/approve', { schema: { hide: true, body: FormBody } }, async (req, reply) => {
    const id = requireSequenceId(req.params.id);
    const revision = Number(req.body.revision);
    return attempt(
      async () => {
        if (!Number.isInteger(revision) || revision < 1) throw new AppError(400, 'invalid_request', 'revision must be a positive integer');
        const done = await authoring.approveSequence(workspaceOf(req), id, { expectedRevision: revision });
        const text = done.changed ? `Approved revision ${revision}.` : `Revision ${revision} was already approved.`;
        return redirectWithNotice(reply, `/console/sequences/${id}`, { kind: 'done', text });
      },
      (notice, status) => renderOne(req, reply, id, { notice, status }),
    );
  });

  /** The draft's editor: its structural buttons and Preview re-render the page; "Save steps" calls replaceSteps. */
  app.post<{ Params: { id: string }; Body: { revision?: string } }>(
    '/console/sequences/:id/steps',
    { schema: { hide: true, body: FormBody } },
    async (req, reply) => {
      const id = requireSequenceId(req.params.id);
      const editor = readEditorForm(req.body);
      const op = readOp(req.body, editor);
      const revision = Number(req.body.revision);
      const editedRevision = Number.isInteger(revision) && revision >= 1 ? revision : undefined;
      return attempt(
        async () => {
          if (op.kind !== 'save') {
            const next = await runEditorOp(authoring, workspaceOf(req), editor, op);
            return renderOne(req, reply, id, { editor: next.state, preview: next.preview, notice: next.notice, editedRevision });
          }
          if (editedRevision === undefined) throw new AppError(400, 'invalid_request', 'revision must be a positive integer');
          const done = await authoring.replaceSteps(workspaceOf(req), id, {
            expectedRevision: editedRevision,
            steps: toAuthoringSteps(editor),
            sendInLeadHours: editor.sendInLeadHours,
          });
          const text = done.changed
            ? `Saved revision ${done.sequence.revision}. Approve it to send it.`
            : `Nothing changed: the steps are those of revision ${done.sequence.revision}.`;
          return redirectWithNotice(reply, `/console/sequences/${id}`, { kind: 'done', text });
        },
        (notice, status) => renderOne(req, reply, id, { notice, status, editor, editedRevision }),
      );
    },
  );
}
