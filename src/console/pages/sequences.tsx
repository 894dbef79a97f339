import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import { AppError, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { ExecutionBlockReason, Step, StepChange } from '../../modules/sequences/index.js';
import type { ConsoleDeps } from '../plugin.js';
import { CsrfField, PostButton, TableHead } from '../layout.js';
import { pageContext, sendPage } from '../render.js';

const FormBody = Type.Object({ _csrf: Type.Optional(Type.String()) }, { additionalProperties: true });
type StatusForm = { status?: string };
type ApproveForm = { revision?: string };

/** The status changes a person can ask for, labelled by what they do; the service applies the spec's table. */
const STATUS_ACTIONS = [
  { status: 'active', label: 'Activate' },
  { status: 'paused', label: 'Pause' },
  { status: 'draft', label: 'Back to draft' },
] as const;

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

interface Notice {
  kind: 'done' | 'refused';
  text: string;
}

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

/**
 * Sequences: the list with status, revisions, lead count and what blocks sending, status changes, and approval of an
 * exact revision after seeing what changed since the approved one. Rules live in the sequences and authoring services.
 */
export function sequencesPages(app: AppInstance, deps: ConsoleDeps) {
  const { sequences, authoring } = deps.services;
  const workspaceOf = (req: FastifyRequest) => req.consoleSession!.auth.workspaceId;

  async function renderList(req: FastifyRequest, reply: FastifyReply, notice: Notice | null, status = 200) {
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    const list = await sequences.listSequences(workspaceOf(req));
    return sendPage(reply, ctx, {
      title: 'Sequences',
      nav: 'sequences',
      status,
      body: (
        <>
          <h1>Sequences</h1>
          <NoticeBox notice={notice} />
          {list.length === 0 ? (
            <p>No sequence yet. Agents create them through the API or the agent tools.</p>
          ) : (
            <table>
              <TableHead columns={['Name', 'Status', 'Revision', 'Approved revision', 'Leads', 'Blocked by', 'Actions']} />
              <tbody>
                {list.map((s) => (
                  <tr>
                    <td>
                      <a href={`/console/sequences/${s.id}`} safe>
                        {s.name}
                      </a>
                    </td>
                    <td safe>{s.status}</td>
                    <td>{String(s.revision)}</td>
                    <td>{s.approvedRevision === null ? 'never' : String(s.approvedRevision)}</td>
                    <td>{String(s.leadCount)}</td>
                    <td safe>{s.executionBlockReason ? BLOCK_REASON_TEXT[s.executionBlockReason] : '—'}</td>
                    <td>
                      {s.status === 'archived'
                        ? 'read-only'
                        : STATUS_ACTIONS.filter((a) => a.status !== s.status).map((a) => (
                            <PostButton
                              action={`/console/sequences/${s.id}/status`}
                              csrfToken={ctx.csrfToken}
                              fields={{ status: a.status }}
                              label={a.label}
                              ariaLabel={`${a.label} ${s.name}`}
                            />
                          ))}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      ),
    });
  }

  async function renderOne(req: FastifyRequest, reply: FastifyReply, sequenceId: string, notice: Notice | null, status = 200) {
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    const seq = await sequences.getSequenceForReview(workspaceOf(req), sequenceId);
    const approvedCurrent = seq.approvedRevision === seq.revision;
    const changed = seq.changes.filter((c) => c.change !== 'unchanged').length;
    return sendPage(reply, ctx, {
      title: seq.name,
      nav: 'sequences',
      status,
      body: (
        <>
          <p>
            <a href="/console/sequences">All sequences</a>
          </p>
          <h1 safe>{seq.name}</h1>
          <NoticeBox notice={notice} />
          <p safe>
            {`Status ${seq.status} · revision ${seq.revision} · ${seq.approvedRevision === null ? 'never approved' : `approved revision ${seq.approvedRevision}`} · ${seq.leadCount} leads`}
          </p>
          <section aria-labelledby="changes">
            <h2 id="changes">
              {seq.approvedRevision === null
                ? `Steps of revision ${seq.revision} (none approved yet)`
                : approvedCurrent
                  ? `Steps of revision ${seq.revision} (approved)`
                  : `Changes since approved revision ${seq.approvedRevision}: ${changed} of ${seq.changes.length} steps`}
            </h2>
            {!seq.approvedStepsKnown ? (
              <p role="note">
                The steps of the approved revision were not recorded (it was approved before this version kept them); every step is shown as added.
              </p>
            ) : null}
            <table>
              <TableHead columns={['Step', 'Change', 'Now', 'Approved']} />
              <tbody>
                {seq.changes.map((c) => (
                  <tr class={`change-${c.change}`}>
                    <td>{String(c.position + 1)}</td>
                    <td>{CHANGE_LABEL[c.change]}</td>
                    <td safe>{'step' in c ? describeStep(c.step) : '—'}</td>
                    <td safe>{c.change === 'changed' || c.change === 'removed' ? describeStep(c.approved) : c.change === 'unchanged' ? 'same' : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
          {seq.status === 'archived' ? (
            <p>An archived sequence is read-only.</p>
          ) : approvedCurrent ? null : (
            <form method="post" action={`/console/sequences/${seq.id}/approve`}>
              <CsrfField token={ctx.csrfToken} />
              {/* The exact revision shown: if an agent edits the sequence meanwhile, the service refuses a stale approval. */}
              <input type="hidden" name="revision" value={String(seq.revision)} />
              <button type="submit">{`Approve revision ${seq.revision}`}</button>
            </form>
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
  async function attempt(run: () => Promise<Notice>, render: (notice: Notice, status?: number) => Promise<FastifyReply>) {
    try {
      return await render(await run());
    } catch (err) {
      if (err instanceof AppError && err.statusCode >= 400 && err.statusCode < 500 && err.statusCode !== 404) {
        return render({ kind: 'refused', text: err.message }, err.statusCode);
      }
      throw err;
    }
  }

  app.get('/console/sequences', { schema: { hide: true } }, async (req, reply) => renderList(req, reply, null));

  app.get<{ Params: { id: string } }>('/console/sequences/:id', { schema: { hide: true } }, async (req, reply) =>
    renderOne(req, reply, requireSequenceId(req.params.id), null),
  );

  app.post<{ Params: { id: string }; Body: StatusForm }>('/console/sequences/:id/status', { schema: { hide: true, body: FormBody } }, async (req, reply) => {
    const id = requireSequenceId(req.params.id);
    const wanted = STATUS_ACTIONS.find((a) => a.status === req.body.status);
    return attempt(
      async () => {
        if (!wanted) throw new AppError(400, 'invalid_request', `status must be one of: ${STATUS_ACTIONS.map((a) => a.status).join(', ')}`);
        const done = await sequences.setStatus(workspaceOf(req), id, wanted.status);
        return { kind: 'done', text: `Status changed from ${done.previousStatus} to ${done.status}.` };
      },
      (notice, status) => renderList(req, reply, notice, status),
    );
  });

  app.post<{ Params: { id: string }; Body: ApproveForm }>('/console/sequences/:id/approve', { schema: { hide: true, body: FormBody } }, async (req, reply) => {
    const id = requireSequenceId(req.params.id);
    const revision = Number(req.body.revision);
    return attempt(
      async () => {
        if (!Number.isInteger(revision) || revision < 1) throw new AppError(400, 'invalid_request', 'revision must be a positive integer');
        const done = await authoring.approveSequence(workspaceOf(req), id, { expectedRevision: revision });
        return { kind: 'done', text: done.changed ? `Approved revision ${revision}.` : `Revision ${revision} was already approved.` };
      },
      (notice, status) => renderOne(req, reply, id, notice, status),
    );
  });
}

function NoticeBox(props: { notice: Notice | null }) {
  if (!props.notice) return null;
  return (
    <div class={`notice notice-${props.notice.kind}`} role={props.notice.kind === 'refused' ? 'alert' : 'status'}>
      <p safe>{props.notice.text}</p>
    </div>
  );
}
