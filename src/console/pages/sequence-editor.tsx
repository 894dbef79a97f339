import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import { AppError } from '../../lib/errors.js';
import { ENGAGE_KINDS, STEP_KINDS } from '../../domain/vocabulary.js';
import type { AuthoringService } from '../../modules/authoring/index.js';
import type { ConsoleDeps } from '../deps.js';
import { CsrfField } from '../layout.js';
import { pageContext, sendPage } from '../render.js';
import { NoticeBox, OpButton, redirectWithNotice, type Notice } from '../ui.js';
import { BranchFieldset, StepTargets } from './sequence-branch-editor.js';
import {
  applyEditorOp,
  emptyStep,
  forPeople,
  KIND_PARTS,
  kindUses,
  MAX_DELAY_DAYS,
  readEditorForm,
  readOp,
  toAuthoringSteps,
  type EditorOp,
  type EditorState,
  type FormStep,
} from './sequence-form.js';

export const EditorFormBody = Type.Object({ _csrf: Type.Optional(Type.String()) }, { additionalProperties: true });

/** The action types the engine knows (engine/steps.ts maps them to a ledger action); an agent's other types are kept. */
const ACTION_TYPES = [
  { type: 'like_last_post', label: 'like_last_post: like their last post' },
  { type: 'follow', label: 'follow (X)' },
  { type: 'view_profile', label: 'view_profile (LinkedIn)' },
  { type: 'endorse', label: 'endorse (LinkedIn)' },
  { type: 'comment', label: 'comment (LinkedIn)' },
] as const;

export type PreviewResult = Awaited<ReturnType<AuthoringService['previewStep']>>;
export interface PreviewView {
  step: number;
  result: PreviewResult;
}
export interface LeadOption {
  id: string;
  label: string;
}

/** The leads Preview can render for: the workspace's newest, by name (or e-mail, or id when it has neither). */
export async function leadOptions(deps: ConsoleDeps, workspaceId: string): Promise<LeadOption[]> {
  const { leads } = await deps.services.leads.listLeads(workspaceId, { limit: 100 });
  return leads.map((l) => ({ id: l.id, label: [l.person ?? l.email ?? l.id, l.company].filter(Boolean).join(', ') }));
}

/** A refusal (4xx other than 404) as the notice shown above the form, which keeps what was typed. */
export function refusalOf(err: unknown): { notice: Notice; status: number } | null {
  if (err instanceof AppError && err.statusCode >= 400 && err.statusCode < 500 && err.statusCode !== 404) {
    return { notice: { kind: 'refused', text: `${forPeople(err.message)} (${err.statusCode})` }, status: err.statusCode };
  }
  return null;
}

/**
 * Runs a Preview or a structural op on the posted editor: the new form state and, for Preview, the rendered step.
 * A Preview's own refusal (no lead chosen) is a notice; a foreign lead is the 404 page like any foreign id.
 */
export async function runEditorOp(
  authoring: AuthoringService,
  workspaceId: string,
  state: EditorState,
  op: Exclude<EditorOp, { kind: 'save' }>,
): Promise<{ state: EditorState; preview: PreviewView | null; notice: Notice | null }> {
  if (op.kind !== 'preview') return { state: applyEditorOp(state, op), preview: null, notice: null };
  if (state.leadId === '') return { state, preview: null, notice: { kind: 'refused', text: 'Choose a lead under “Preview for lead” first.' } };
  const s = state.steps[op.step];
  const result = await authoring.previewStep(workspaceId, {
    leadId: state.leadId,
    subject: s.subject.trim() === '' ? null : s.subject,
    message: s.message.trim() === '' ? null : s.message,
    variants: s.variants.map((v) => ({ key: v.key, messageTmpl: v.message })),
  });
  return { state, preview: { step: op.step, result }, notice: null };
}

function Rendered(props: { label: string; result: PreviewResult['message'] }) {
  const r = props.result;
  if (r === null) return '';
  return (
    <div class="preview-part">
      <p class="preview-label" safe>
        {props.label}
      </p>
      {r.ok ? (
        <p class="preview-text" safe>
          {r.text}
        </p>
      ) : (
        <p class="error" safe>
          {r.reason === 'unknown_placeholder'
            ? `Unknown placeholder {{${r.field}}}: no lead has it, so this step would be skipped for everyone.`
            : r.reason === 'broken_placeholder'
              ? `The text for this lead would still show ${r.token}: the step would be skipped for them, never sent with it.`
              : `This lead has no ${r.field}: the step would be skipped for them (add a fallback: {{${r.field}|…}}).`}
        </p>
      )}
    </div>
  );
}

function PreviewBox(props: { preview: PreviewView }) {
  const { result } = props.preview;
  return (
    <div class="preview" role="status">
      <p>
        <strong safe>{`Preview for ${result.lead.person ?? result.lead.id}`}</strong>
      </p>
      <Rendered label="Subject" result={result.subject} />
      <Rendered label="Message" result={result.message} />
      {result.variants.map((v) => (
        <Rendered label={`Variant ${v.key}`} result={v.result} />
      ))}
      {result.subject === null && result.message === null && result.variants.length === 0 ? <p>This step has no text to render.</p> : ''}
    </div>
  );
}

function StepFieldset(props: { i: number; step: FormStep; canPreview: boolean; preview: PreviewView | null }) {
  const { i, step } = props;
  const p = `s${i}_`;
  const id = (name: string) => `${p}${name}`;
  const stepName = `step ${i + 1}`;
  // At least one action row is shown so an engage step can get its action without an extra round trip.
  const actions = step.actions.length > 0 ? step.actions : [{ type: '', count: '', reaction: '' }];
  const known = new Set<string>(ACTION_TYPES.map((a) => a.type));
  return (
    <fieldset class="step">
      <legend safe>{`Step ${i + 1}`}</legend>
      <input type="hidden" name={id('variant_count')} value={String(step.variants.length)} />
      <input type="hidden" name={id('action_count')} value={String(actions.length)} />
      <input type="hidden" name={id('tool')} value={step.tool} />
      <p>
        <label for={id('kind')}>Kind</label>{' '}
        <select id={id('kind')} name={id('kind')} data-kind-select>
          {STEP_KINDS.map((k) => (
            <option value={k} selected={k === step.kind}>
              {k}
            </option>
          ))}
        </select>{' '}
        <label for={id('delay')}>Delay (days)</label>{' '}
        <input id={id('delay')} name={id('delay')} type="number" min="0" max={String(MAX_DELAY_DAYS)} value={step.delay} required />
      </p>
      <p data-kinds={KIND_PARTS.subject.join(' ')} hidden={!kindUses('subject', step.kind)}>
        <label for={id('subject')}>Subject</label> <span class="muted">(email steps)</span>
        <input id={id('subject')} name={id('subject')} type="text" class="wide" value={step.subject} />
      </p>
      {step.variants.length === 0 ? (
        <p>
          <label for={id('message')}>Message</label>{' '}
          <span class="muted">
            (placeholders such as {'{{firstName}}'} or {'{{company|your team}}'})
          </span>
          <textarea id={id('message')} name={id('message')} rows="3" safe>
            {step.message}
          </textarea>
        </p>
      ) : (
        <input type="hidden" name={id('message')} value={step.message} />
      )}
      {step.variants.map((v, j) => (
        <fieldset class="variant">
          <legend safe>{`Variant ${j + 1}`}</legend>
          <label for={id(`v${j}_key`)}>Key</label> <input id={id(`v${j}_key`)} name={id(`v${j}_key`)} type="text" value={v.key} size="6" />{' '}
          <label for={id(`v${j}_weight`)}>Weight</label>{' '}
          <input id={id(`v${j}_weight`)} name={id(`v${j}_weight`)} type="number" min="0" step="any" value={v.weight} />
          <p>
            <label for={id(`v${j}_message`)}>Message</label>
            <textarea id={id(`v${j}_message`)} name={id(`v${j}_message`)} rows="3" safe>
              {v.message}
            </textarea>
          </p>
          <OpButton op={`remove_variant:${i}:${j}`} label="Remove variant" context={`${j + 1} of ${stepName}`} />
        </fieldset>
      ))}
      <fieldset class="actions" data-kinds={KIND_PARTS.actions.join(' ')} hidden={!kindUses('actions', step.kind)}>
        <legend>Actions</legend>
        <p class="muted">engage and x_engage steps need at least one.</p>
        {actions.map((a, j) => (
          <p>
            <input type="hidden" name={id(`a${j}_reaction`)} value={a.reaction} />
            <label for={id(`a${j}_type`)} safe>
              {`Action ${j + 1}`}
            </label>{' '}
            <select id={id(`a${j}_type`)} name={id(`a${j}_type`)}>
              <option value="" selected={a.type === ''}>
                none
              </option>
              {ACTION_TYPES.map((t) => (
                <option value={t.type} selected={t.type === a.type}>
                  {t.label}
                </option>
              ))}
              {a.type !== '' && !known.has(a.type) ? (
                <option value={a.type} selected safe>
                  {a.type}
                </option>
              ) : (
                ''
              )}
            </select>{' '}
            <label for={id(`a${j}_count`)} safe>
              {`Count ${j + 1}`}
            </label>{' '}
            <input id={id(`a${j}_count`)} name={id(`a${j}_count`)} type="number" min="1" max="100" value={a.count} />
          </p>
        ))}
        <OpButton op={`add_action:${i}`} label="Add action" context={`to ${stepName}`} />
      </fieldset>
      <p class="step-buttons">
        <OpButton op={`add_variant:${i}`} label="Add variant" context={`to ${stepName}`} />{' '}
        {props.canPreview ? <OpButton op={`preview:${i}`} label="Preview" context={stepName} /> : ''}{' '}
        <OpButton op={`remove_step:${i}`} label="Remove step" context={String(i + 1)} variant="danger" />
      </p>
      <BranchFieldset i={i} branch={step.branch} />
      {props.preview && props.preview.step === i ? <PreviewBox preview={props.preview} /> : ''}
    </fieldset>
  );
}

/**
 * The steps part of the editor (inside the caller's form): one fieldset per step, the Preview lead, "Add step".
 * `engageKinds` are named so the hint stays true if the vocabulary grows.
 */
export function StepsEditor(props: { state: EditorState; leads: LeadOption[]; preview: PreviewView | null }) {
  const { state, leads } = props;
  return (
    <div class="step-editor">
      <input type="hidden" name="step_count" value={String(state.steps.length)} />
      {leads.length > 0 ? (
        <p>
          <label for="preview-lead">Preview for lead</label>{' '}
          <select id="preview-lead" name="lead">
            <option value="" selected={state.leadId === ''}>
              choose a lead
            </option>
            {leads.map((l) => (
              <option value={l.id} selected={l.id === state.leadId} safe>
                {l.label}
              </option>
            ))}
          </select>
        </p>
      ) : (
        <p class="muted">Preview renders a step for one of your leads; this workspace has no lead yet.</p>
      )}
      <p>
        <input
          id="send-in-lead-hours"
          name="send_in_lead_hours"
          type="checkbox"
          value="1"
          checked={state.sendInLeadHours}
          aria-describedby="send-in-lead-hours-help"
        />{' '}
        <label for="send-in-lead-hours">Send in each lead's own hours (when known)</label>
        <br />
        <span id="send-in-lead-hours-help" class="muted">
          A lead with a known time zone gets its steps in the sending hours of that zone; the others in the account's hours. Caps keep counting in the account's
          day.
        </span>
      </p>
      <StepTargets steps={state.steps} />
      {state.steps.length === 0 ? <p>No step yet: add one.</p> : ''}
      {state.steps.map((s, i) => (
        <StepFieldset i={i} step={s} canPreview={leads.length > 0} preview={props.preview} />
      ))}
      <p class="muted" safe>{`${ENGAGE_KINDS.join(' and ')} steps take actions; the other kinds send a message or its variants.`}</p>
      <p>
        <button type="submit" name="op" value="add_step">
          Add step
        </button>
      </p>
      <script src="/console/assets/sequence-editor.js" defer></script>
      <noscript>
        <p>
          <button type="submit" name="op" value="refresh">
            Show the fields of the chosen kinds
          </button>{' '}
          <span class="muted">(after changing a step's kind: its subject or actions appear; values a kind does not use are not saved)</span>
        </p>
      </noscript>
    </div>
  );
}

/** The link back to the list, above a sequence's page and the new-sequence page. */
export function BackToSequences() {
  return (
    <p>
      <a href="/console/sequences">All sequences</a>
    </p>
  );
}

/** `/console/sequences/new`: a name and steps; "Create sequence" saves a draft through authoring.createSequence. */
export function sequenceEditorPages(app: AppInstance, deps: ConsoleDeps) {
  const { authoring } = deps.services;
  const workspaceOf = (req: FastifyRequest) => req.consoleSession!.auth.workspaceId;

  async function renderNew(
    req: FastifyRequest,
    reply: FastifyReply,
    state: EditorState,
    extra: { preview?: PreviewView | null; notice?: Notice | null; status?: number },
  ) {
    const [ctx, leads] = await Promise.all([pageContext(req, reply, deps.services.consoleSessions), leadOptions(deps, workspaceOf(req))]);
    return sendPage(reply, ctx, {
      title: 'New sequence',
      nav: 'sequences',
      status: extra.status,
      body: (
        <>
          <BackToSequences />
          <h1>New sequence</h1>
          <NoticeBox notice={extra.notice} />
          <p>It is saved as a draft: nothing is sent until it is approved and activated.</p>
          <form method="post" action="/console/sequences/new" class="sequence-form">
            <CsrfField token={ctx.csrfToken} />
            <p>
              <label for="sequence-name">Name</label>
              <input id="sequence-name" name="name" type="text" class="wide" value={state.name} maxlength="200" />
            </p>
            <StepsEditor state={state} leads={leads} preview={extra.preview ?? null} />
            <p>
              <button type="submit" name="op" value="save" class="primary">
                Create sequence
              </button>
            </p>
          </form>
        </>
      ),
    });
  }

  app.get('/console/sequences/new', { schema: { hide: true } }, async (req, reply) =>
    renderNew(req, reply, { name: '', steps: [emptyStep()], leadId: '', sendInLeadHours: false }, {}),
  );

  app.post('/console/sequences/new', { schema: { hide: true, body: EditorFormBody } }, async (req, reply) => {
    const state = readEditorForm(req.body);
    const op = readOp(req.body, state);
    try {
      if (op.kind !== 'save') {
        const next = await runEditorOp(authoring, workspaceOf(req), state, op);
        return await renderNew(req, reply, next.state, { preview: next.preview, notice: next.notice });
      }
      if (state.name.trim() === '') throw new AppError(400, 'invalid_name', 'Name is required: give the sequence a name');
      const done = await authoring.createSequence(workspaceOf(req), {
        name: state.name,
        steps: toAuthoringSteps(state),
        sendInLeadHours: state.sendInLeadHours,
      });
      const notice: Notice = { kind: 'done', text: `Created the draft ${done.sequence.name} (revision 1). Approve it here when it is ready.` };
      return redirectWithNotice(reply, `/console/sequences/${done.sequence.id}`, notice);
    } catch (err) {
      const refused = refusalOf(err);
      if (!refused) throw err;
      return renderNew(req, reply, state, refused);
    }
  });
}
