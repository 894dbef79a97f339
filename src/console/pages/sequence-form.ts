// The sequence editor's form, without a front-end framework: the page is a plain form with one fieldset per step,
// and its structural buttons ("Add step", "Add variant", "Remove step"…) are submit buttons named `op` that post the
// whole form back, so the server re-renders it with one fieldset more or less. Everything a person typed rides along
// in the fields, as strings, until "Create sequence" / "Save steps" turns it into the authoring service's steps.
import { badRequest } from '../../lib/errors.js';
import { ENGAGE_KINDS, STEP_KINDS } from '../../domain/vocabulary.js';
import type { AuthoringStepInput } from '../../modules/authoring/index.js';
import type { Step } from '../../modules/sequences/index.js';
import { applyEdgeOp, branchFromStep, readBranchForm, toBranchProperties, type FormBranch } from './sequence-branch-form.js';

export const MAX_FORM_STEPS = 50;
export const MAX_FORM_VARIANTS = 10;
export const MAX_FORM_ACTIONS = 10;
export const MAX_DELAY_DAYS = 365;

/**
 * Which step kinds use a kind-specific part of the form (docs/console.md "Sequence editor"): the subject is sent
 * with e-mail steps only (engine/outcomes.ts renders it for `email`), and actions are what an engage or x_engage
 * step does (the drivers read them for those kinds only). The editor draws the other kinds' parts hidden, and
 * `toAuthoringSteps` ignores what a step's kind does not use, so a value left in a hidden field is never saved.
 */
export const KIND_PARTS = { subject: ['email'], actions: ENGAGE_KINDS } as const satisfies Record<string, readonly string[]>;
export type KindPart = keyof typeof KIND_PARTS;
/** Whether a step of this kind uses that part of the form. */
export const kindUses = (part: KindPart, kind: string): boolean => (KIND_PARTS[part] as readonly string[]).includes(kind);

export interface FormAction {
  type: string;
  count: string;
  /** Kept as written by an agent (the form has no field for it), so saving from the console does not drop it. */
  reaction: string;
}
export interface FormVariant {
  key: string;
  weight: string;
  message: string;
}
export interface FormStep {
  kind: string;
  delay: string;
  subject: string;
  message: string;
  actions: FormAction[];
  variants: FormVariant[];
  /** Kept as written by an agent, like an action's reaction. */
  tool: string;
  /** The step's id, edges and else (sequence-branch-form.ts); empty on a linear step. */
  branch: FormBranch;
}
export interface EditorState {
  name: string;
  steps: FormStep[];
  /** The lead chosen for Preview. */
  leadId: string;
  /** "Send in each lead's own hours (when known)": the sequence option `sendInLeadHours` (docs/engine.md). */
  sendInLeadHours: boolean;
}

export type EditorOp =
  | { kind: 'save' }
  | { kind: 'add_step' }
  | { kind: 'refresh' }
  | { kind: 'remove_step'; step: number }
  | { kind: 'add_variant'; step: number }
  | { kind: 'remove_variant'; step: number; variant: number }
  | { kind: 'add_action'; step: number }
  | { kind: 'add_edge'; step: number }
  | { kind: 'remove_edge'; step: number; edge: number }
  | { kind: 'preview'; step: number };

type Body = Record<string, unknown>;

function field(body: Body, name: string): string {
  const v = body[name];
  const one: unknown = Array.isArray(v) ? (v as unknown[])[0] : v;
  // Browsers send a textarea's line breaks as CRLF; the stored templates use LF.
  return typeof one === 'string' ? one.replace(/\r\n?/g, '\n') : '';
}

function count(body: Body, name: string, max: number): number {
  const n = Number(field(body, name));
  return Number.isInteger(n) && n > 0 ? Math.min(n, max) : 0;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

export function emptyStep(): FormStep {
  return { kind: 'message', delay: '0', subject: '', message: '', actions: [], variants: [], tool: '', branch: { id: '', edges: [], else: '' } };
}

/** The editor as the form posted it: every value a string, exactly as typed. */
export function readEditorForm(raw: unknown): EditorState {
  const body = (raw ?? {}) as Body;
  const steps = range(count(body, 'step_count', MAX_FORM_STEPS)).map((i): FormStep => {
    const p = `s${i}_`;
    return {
      kind: field(body, `${p}kind`),
      delay: field(body, `${p}delay`),
      subject: field(body, `${p}subject`),
      message: field(body, `${p}message`),
      tool: field(body, `${p}tool`),
      actions: range(count(body, `${p}action_count`, MAX_FORM_ACTIONS)).map((j) => ({
        type: field(body, `${p}a${j}_type`),
        count: field(body, `${p}a${j}_count`),
        reaction: field(body, `${p}a${j}_reaction`),
      })),
      variants: range(count(body, `${p}variant_count`, MAX_FORM_VARIANTS)).map((j) => ({
        key: field(body, `${p}v${j}_key`),
        weight: field(body, `${p}v${j}_weight`),
        message: field(body, `${p}v${j}_message`),
      })),
      branch: readBranchForm((name) => field(body, name), p, count(body, `${p}edge_count`, Number.MAX_SAFE_INTEGER)),
    };
  });
  // A checkbox posts its value only when checked.
  return { name: field(body, 'name'), steps, leadId: field(body, 'lead'), sendInLeadHours: field(body, 'send_in_lead_hours') === '1' };
}

/** The saved steps (and the sequence's option) as the form shows them. */
export function editorFromSteps(name: string, steps: Step[], sendInLeadHours = false): EditorState {
  return {
    name,
    leadId: '',
    sendInLeadHours,
    steps: steps.map((s) => ({
      kind: s.kind,
      delay: String(s.delayDays),
      subject: s.subject ?? '',
      message: s.message ?? '',
      tool: s.tool ?? '',
      actions: s.actions.map((a) => ({ type: a.type, count: a.count === null ? '' : String(a.count), reaction: a.reaction ?? '' })),
      variants: (s.variants ?? []).map((v) => ({ key: v.key, weight: String(v.weight), message: v.messageTmpl })),
      branch: branchFromStep(s),
    })),
  };
}

const OP_PATTERN = /^(save|add_step|refresh|remove_step|add_variant|remove_variant|add_action|add_edge|remove_edge|preview)(?::(\d{1,2}))?(?::(\d{1,2}))?$/;

/** Which button was pressed; a step or variant it names must exist in the posted form. */
export function readOp(raw: unknown, state: EditorState): EditorOp {
  const op = field((raw ?? {}) as Body, 'op') || 'save';
  const m = OP_PATTERN.exec(op);
  const bad = () => badRequest('invalid_request', 'op must be save, add_step, or a step button of this form');
  if (!m) throw bad();
  const kind = m[1] as EditorOp['kind'];
  if (kind === 'save' || kind === 'add_step' || kind === 'refresh') return { kind };
  const step = Number(m[2]);
  if (m[2] === undefined || step >= state.steps.length) throw bad();
  if (kind === 'remove_variant') {
    const variant = Number(m[3]);
    if (m[3] === undefined || variant >= state.steps[step].variants.length) throw bad();
    return { kind, step, variant };
  }
  if (kind === 'remove_edge') {
    const edge = Number(m[3]);
    if (m[3] === undefined || edge >= state.steps[step].branch.edges.length) throw bad();
    return { kind, step, edge };
  }
  return { kind, step };
}

function nextVariantKey(variants: FormVariant[]): string {
  const used = new Set(variants.map((v) => v.key));
  for (const key of 'ABCDEFGHIJKLMNOPQRSTUVWXYZ') if (!used.has(key)) return key;
  return `V${variants.length + 1}`;
}

/** A structural op's new form; `save`, `refresh` (redraw for the chosen kinds, the no-JS path) and `preview` leave it as it is. */
export function applyEditorOp(state: EditorState, op: EditorOp): EditorState {
  const steps = state.steps.map((s) => ({ ...s, actions: [...s.actions], variants: [...s.variants] }));
  switch (op.kind) {
    case 'add_step':
      if (steps.length < MAX_FORM_STEPS) steps.push(emptyStep());
      break;
    case 'remove_step':
      steps.splice(op.step, 1);
      break;
    case 'add_variant': {
      const s = steps[op.step];
      if (s.variants.length === 0) {
        // Splitting a message into an A/B test: the message written so far becomes variant A, B starts empty.
        s.variants.push({ key: 'A', weight: '1', message: s.message }, { key: 'B', weight: '1', message: '' });
        s.message = '';
      } else if (s.variants.length < MAX_FORM_VARIANTS) {
        s.variants.push({ key: nextVariantKey(s.variants), weight: '1', message: '' });
      }
      break;
    }
    case 'remove_variant': {
      const s = steps[op.step];
      const [removed] = s.variants.splice(op.variant, 1);
      // The last variant gone: its text goes back to being the step's message rather than being lost.
      if (s.variants.length === 0 && s.message === '') s.message = removed.message;
      break;
    }
    case 'add_edge':
    case 'remove_edge':
      steps[op.step] = { ...steps[op.step], branch: applyEdgeOp(steps[op.step].branch, op) };
      break;
    case 'add_action':
      if (steps[op.step].actions.length < MAX_FORM_ACTIONS) steps[op.step].actions.push({ type: '', count: '', reaction: '' });
      break;
    default:
      break;
  }
  return { ...state, steps };
}

const orNull = (v: string) => (v.trim() === '' ? null : v);
const WHOLE = /^\s*\d+\s*$/;

/**
 * The authoring service's steps from the form. Only what the form alone can get wrong (a kind, a number that is not
 * one, a variant without a key) is refused here, naming the step and the field's label; every other rule is the
 * service's (authoring.stepProblems), the same the agent tools meet.
 */
export function toAuthoringSteps(state: EditorState): AuthoringStepInput[] {
  return state.steps.map((s, i): AuthoringStepInput => {
    const at = `Step ${i + 1}`;
    if (!(STEP_KINDS as readonly string[]).includes(s.kind)) throw badRequest('invalid_steps', `${at}: Kind must be one of ${STEP_KINDS.join(', ')}`);
    if (!WHOLE.test(s.delay) || Number(s.delay) > MAX_DELAY_DAYS) {
      throw badRequest('invalid_steps', `${at}: Delay (days) must be a whole number from 0 to ${MAX_DELAY_DAYS}`);
    }
    // A part the step's kind does not use is ignored (KIND_PARTS): it stays in the form, hidden, and is never saved.
    const actions = (kindUses('actions', s.kind) ? s.actions : [])
      .filter((a) => a.type.trim() !== '')
      .map((a, j) => {
        if (a.count.trim() !== '' && (!WHOLE.test(a.count) || Number(a.count) < 1 || Number(a.count) > 100)) {
          throw badRequest('invalid_steps', `${at}: Count of action ${j + 1} must be a whole number from 1 to 100, or empty`);
        }
        return { type: a.type.trim(), count: a.count.trim() === '' ? null : Number(a.count), reaction: orNull(a.reaction) };
      });
    const variants = s.variants.map((v, j) => {
      const weight = Number(v.weight);
      if (v.key.trim() === '') throw badRequest('invalid_steps', `${at}: Variant ${j + 1} needs a Key`);
      if (v.weight.trim() === '' || !Number.isFinite(weight) || weight <= 0) {
        throw badRequest('invalid_steps', `${at}: Weight of variant ${v.key.trim()} must be a number above 0`);
      }
      if (v.message.trim() === '') throw badRequest('invalid_steps', `${at}: Message of variant ${v.key.trim()} is empty`);
      return { key: v.key.trim(), weight, messageTmpl: v.message };
    });
    return {
      index: i,
      kind: s.kind as AuthoringStepInput['kind'],
      delayDays: Number(s.delay),
      subject: kindUses('subject', s.kind) ? orNull(s.subject) : null,
      message: orNull(s.message),
      actions,
      variants: variants.length > 0 ? variants : null,
      tool: orNull(s.tool),
      ...toBranchProperties(s.branch, at),
    };
  });
}

/**
 * The service's field paths as people read the form: `steps[1].message: …` is `Step 2 message: …`, and a branch's
 * `steps[0].next[1].goto "x" …` is `Step 1, edge 2, Go to "x" …` (`.if` the edge's If, `.else` Otherwise go to).
 */
export function forPeople(message: string): string {
  return message
    .replace(/steps\[(\d+)\]\.next\[(\d+)\](\.\w+)?/g, (_m, i: string, j: string, part?: string) => {
      const label = { '.goto': ', Go to', '.if': ', If', '.withinDays': ', Within (days)' }[part ?? ''] ?? '';
      return `Step ${Number(i) + 1}, edge ${Number(j) + 1}${label}`;
    })
    .replace(/steps\[(\d+)\]\.else/g, (_m, i: string) => `Step ${Number(i) + 1}, Otherwise go to`)
    .replace(/steps\[(\d+)\]\.?/g, (_m, i: string) => `Step ${Number(i) + 1} `)
    .replace(/ :/g, ':');
}
