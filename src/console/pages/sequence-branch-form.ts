// The branch block of the sequence editor's form (docs/console.md "Sequence editor", docs/sequences-and-leads.md
// "Branches"): a step's id, its ordered edges and its else, as plain form fields. An edge is one condition chosen from
// a list, the few inputs that condition reads, an optional wait and a target. Everything stays a string as typed
// until `toBranchProperties` turns it into the one wire form (modules/sequences/branch.schemas.ts), which the
// authoring service checks like any other door's (graph problems name the step and the field).
import { badRequest } from '../../lib/errors.js';
import { BRANCH_CHANNELS, CONDITION_FIELDS, REPLY_INTENTS } from '../../domain/branches.js';

export const MAX_FORM_EDGES = 10;

/** The inputs a condition reads beside its choice; the editor shows only those (data-conds). */
export type EdgePart = 'channel' | 'intent' | 'field' | 'percent' | 'within';

/**
 * The conditions a person picks from, in words, each with the inputs it reads. Every condition of the grammar has a
 * choice, so a sequence written through the API or the agent tools opens here without losing an edge.
 */
export const CONDITION_CHOICES = [
  { value: 'accepted:true', label: 'Invitation accepted', parts: ['within'] },
  { value: 'accepted:false', label: 'Invitation not accepted', parts: ['within'] },
  { value: 'replied:true', label: 'Replied', parts: ['channel', 'intent', 'within'] },
  { value: 'replied:false', label: 'No reply', parts: ['channel', 'within'] },
  { value: 'outOfOffice:true', label: 'Out-of-office reply', parts: ['within'] },
  { value: 'outOfOffice:false', label: 'No out-of-office reply', parts: ['within'] },
  { value: 'bounced:true', label: 'E-mail bounced', parts: ['within'] },
  { value: 'bounced:false', label: 'E-mail did not bounce', parts: ['within'] },
  { value: 'meetingBooked:true', label: 'Meeting booked', parts: ['within'] },
  { value: 'meetingBooked:false', label: 'No meeting booked', parts: ['within'] },
  { value: 'hasAddress', label: 'Has an address on', parts: ['channel'] },
  { value: 'lacksAddress', label: 'Has no address on', parts: ['channel'] },
  { value: 'allowed:true', label: 'The engine may do this step', parts: [] },
  { value: 'allowed:false', label: 'The platform rules keep the engine from this step', parts: [] },
  { value: 'field', label: 'A lead field', parts: ['field'] },
  { value: 'split', label: 'Random split', parts: ['percent'] },
] as const satisfies readonly { value: string; label: string; parts: readonly EdgePart[] }[];

export const FIELD_TESTS = ['equals', 'contains', 'exists', 'empty'] as const;
export const FIELD_NAMES = CONDITION_FIELDS;
export { BRANCH_CHANNELS, REPLY_INTENTS };

export interface FormEdge {
  cond: string;
  /** The channel a reply or an address is on ('' on a reply: any channel). */
  channel: string;
  /** A reply's intent ('' for any). */
  intent: string;
  field: string;
  test: string;
  value: string;
  percent: string;
  within: string;
  goto: string;
}

export interface FormBranch {
  id: string;
  edges: FormEdge[];
  /** '' for the next step in the list. */
  else: string;
}

export const emptyEdge = (): FormEdge => ({
  cond: 'replied:true',
  channel: '',
  intent: '',
  field: 'title',
  test: 'contains',
  value: '',
  percent: '50',
  within: '',
  goto: '',
});

/** Which inputs a choice reads (none for an unknown one, which is refused on save). */
export function partsOf(cond: string): readonly EdgePart[] {
  return CONDITION_CHOICES.find((c) => c.value === cond)?.parts ?? [];
}

type Field = (name: string) => string;

/** The branch block of step `p` (`s0_`…) as the form posted it. */
export function readBranchForm(field: Field, p: string, edgeCount: number): FormBranch {
  const edges = Array.from({ length: Math.min(edgeCount, MAX_FORM_EDGES) }, (_, j): FormEdge => {
    const e = (name: string) => field(`${p}e${j}_${name}`);
    return {
      cond: e('cond'),
      channel: e('channel'),
      intent: e('intent'),
      field: e('field'),
      test: e('test'),
      value: e('value'),
      percent: e('percent'),
      within: e('within'),
      goto: e('goto'),
    };
  });
  return { id: field(`${p}id`), edges, else: field(`${p}else`) };
}

interface WireStep {
  id?: string;
  next?: { if: Record<string, unknown>; withinDays?: number; goto: string }[];
  else?: string;
}

/** A stored step's branch properties as the form shows them. */
export function branchFromStep(s: WireStep): FormBranch {
  const edges = (s.next ?? []).map((e): FormEdge => {
    const c = e.if;
    const edge = { ...emptyEdge(), within: e.withinDays === undefined ? '' : String(e.withinDays), goto: e.goto };
    const key = Object.keys(c).find((k) => k !== 'channel' && k !== 'intent' && k !== 'equals' && k !== 'contains' && k !== 'exists') ?? '';
    if (key === 'hasAddress' || key === 'lacksAddress') return { ...edge, cond: key, channel: String(c[key]) };
    if (key === 'field') {
      const test = typeof c.equals === 'string' ? 'equals' : typeof c.contains === 'string' ? 'contains' : c.exists === false ? 'empty' : 'exists';
      const value = typeof c.equals === 'string' ? c.equals : typeof c.contains === 'string' ? c.contains : '';
      return { ...edge, cond: 'field', field: String(c.field), test, value };
    }
    if (key === 'split') return { ...edge, cond: 'split', percent: String(c.split) };
    return {
      ...edge,
      cond: `${key}:${String(c[key])}`,
      channel: typeof c.channel === 'string' ? c.channel : '',
      intent: typeof c.intent === 'string' ? c.intent : '',
    };
  });
  return { id: s.id ?? '', edges, else: s.else ?? '' };
}

const WHOLE = /^\s*\d+\s*$/;

/** One edge's condition in the wire form; `at` names the edge for a refusal ("Step 2, edge 1"). */
function conditionOf(e: FormEdge, at: string): Record<string, unknown> {
  const choice = CONDITION_CHOICES.find((c) => c.value === e.cond);
  if (!choice) throw badRequest('invalid_steps', `${at}: Condition must be one of ${CONDITION_CHOICES.map((c) => c.label).join(', ')}`);
  const channel = e.channel.trim();
  if (e.cond === 'hasAddress' || e.cond === 'lacksAddress') {
    if (!(BRANCH_CHANNELS as readonly string[]).includes(channel))
      throw badRequest('invalid_steps', `${at}: Channel must be one of ${BRANCH_CHANNELS.join(', ')}`);
    return { [e.cond]: channel };
  }
  if (e.cond === 'field') {
    const name = e.field.trim();
    if (name === '') throw badRequest('invalid_steps', `${at}: Field is required (${FIELD_NAMES.join(', ')}, or custom.<name>)`);
    if (e.test === 'exists' || e.test === 'empty') return { field: name, exists: e.test === 'exists' };
    if (e.test !== 'equals' && e.test !== 'contains') throw badRequest('invalid_steps', `${at}: Test must be one of ${FIELD_TESTS.join(', ')}`);
    return { field: name, [e.test]: e.value };
  }
  if (e.cond === 'split') {
    if (!WHOLE.test(e.percent)) throw badRequest('invalid_steps', `${at}: Percent must be a whole number from 1 to 99`);
    return { split: Number(e.percent) };
  }
  const [key, value] = e.cond.split(':');
  return {
    [key]: value === 'true',
    ...(choice.parts.includes('channel' as never) && channel !== '' && { channel }),
    ...(choice.parts.includes('intent' as never) && e.intent.trim() !== '' && { intent: e.intent.trim() }),
  };
}

/**
 * The wire form's branch properties of one step (only those set: a step without id, edges or else stays linear).
 * Refuses, naming the step, the edge and the field's label, only what the form alone can get wrong; the graph's rules
 * are the authoring service's.
 */
export function toBranchProperties(b: FormBranch, step: string): WireStep {
  const next = b.edges.map((e, j) => {
    const at = `${step}, edge ${j + 1}`;
    const within = e.within.trim();
    if (within !== '' && !WHOLE.test(within)) throw badRequest('invalid_steps', `${at}: Within (days) must be a whole number from 1 to 365, or empty`);
    if (e.goto.trim() === '') throw badRequest('invalid_steps', `${at}: Go to is required (a step id, goal or exit)`);
    const waits = partsOf(e.cond).includes('within') && within !== '';
    return { if: conditionOf(e, at), ...(waits && { withinDays: Number(within) }), goto: e.goto.trim() };
  });
  return {
    ...(b.id.trim() !== '' && { id: b.id.trim() }),
    ...(next.length > 0 && { next }),
    ...(b.else.trim() !== '' && { else: b.else.trim() }),
  };
}

/** The form after an edge op: `add_edge` appends a blank edge (up to MAX_FORM_EDGES), `remove_edge` drops one. */
export function applyEdgeOp(b: FormBranch, op: { kind: 'add_edge' } | { kind: 'remove_edge'; edge: number }): FormBranch {
  const edges = [...b.edges];
  if (op.kind === 'add_edge') {
    if (edges.length < MAX_FORM_EDGES) edges.push(emptyEdge());
  } else edges.splice(op.edge, 1);
  return { ...b, edges };
}
