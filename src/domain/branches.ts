import { createHash } from 'node:crypto';
import { CLASSIFICATIONS, type Classification } from './classify-rules/types.js';
import { sentimentOf } from './classify.js';
import { CHANNEL_OF_STEP } from './vocabulary.js';

// A sequence that branches (docs/sequences-and-leads.md "Branches"): the grammar of a step's edges, the checks a
// graph must pass before it is saved, and the one evaluator the engine and the forecast share. Pure: no I/O, no clock.

/** Where an edge leads: a step's `id`, or the end of the lead's run with an outcome. */
export type BranchTarget = string;
export const END_TARGETS = ['goal', 'exit'] as const;
export type EndTarget = (typeof END_TARGETS)[number];

/** The channels a condition can name (a reply on it, an address for it). */
export const BRANCH_CHANNELS = ['linkedin', 'email', 'x'] as const;
export type BranchChannel = (typeof BRANCH_CHANNELS)[number];

/** The recipient field holding the lead's address on each channel a condition can name (`hasAddress`). */
export const ADDRESS_FIELD = { linkedin: 'linkedinUrl', email: 'email', x: 'xUserId' } as const satisfies Record<BranchChannel, string>;

/** What `{"replied": true, "intent": …}` may name: a classifier label, or a sentiment (positive, negative, neutral). */
export const REPLY_INTENTS = [...CLASSIFICATIONS, 'neutral'] as const;

/** Lead fields a `field` condition may read; `custom.<name>` reads a custom field. */
export const CONDITION_FIELDS = ['person', 'company', 'title', 'email', 'linkedinUrl', 'username', 'timeZone'] as const;

/** One condition: exactly one of these shapes. */
export type Condition =
  | { accepted: boolean }
  | { replied: boolean; channel?: BranchChannel; intent?: string }
  | { outOfOffice: boolean }
  | { bounced: boolean }
  | { meetingBooked: boolean }
  | { hasAddress: BranchChannel }
  | { lacksAddress: BranchChannel }
  | { allowed: boolean }
  | { field: string; equals?: string; contains?: string; exists?: boolean }
  | { split: number };

export interface Edge {
  if: Condition;
  /** Only on a condition about something that happens (accepted, replied, outOfOffice, bounced, meetingBooked). */
  withinDays?: number;
  goto: BranchTarget;
}

/** The branch properties a step may carry (x-extension): its id, its ordered edges and what follows when none holds. */
export interface BranchStep {
  index?: number;
  kind: string;
  delayDays: number;
  id?: string;
  next?: Edge[];
  else?: BranchTarget;
}

/** The conditions about something that happens to the lead, which may wait for it (`withinDays`). */
const EVENT_KEYS = ['accepted', 'replied', 'outOfOffice', 'bounced', 'meetingBooked'] as const;

/** The key that names a condition's shape. */
export function conditionKey(c: Condition): string {
  for (const k of ['accepted', 'replied', 'outOfOffice', 'bounced', 'meetingBooked', 'hasAddress', 'lacksAddress', 'allowed', 'field', 'split'])
    if (k in c) return k;
  return 'unknown';
}

/** The keys a condition may carry besides its own, in the order the wire form writes them. */
const QUALIFIERS = ['channel', 'intent', 'equals', 'contains', 'exists'] as const;

/**
 * A condition with its keys in one order: its own key, then its qualifiers (channel, intent; equals, contains,
 * exists). The database's JSON keeps no key order (PostgreSQL's jsonb sorts keys), so a step read back is compared and
 * answered in this order: the same condition written twice is the same text, and an unchanged save is no new revision.
 */
export function canonicalCondition<C extends object>(c: C): C {
  const key = conditionKey(c as Condition);
  const raw = c as Record<string, unknown>;
  const out: Record<string, unknown> = key in raw ? { [key]: raw[key] } : {};
  for (const q of QUALIFIERS) if (q in raw) out[q] = raw[q];
  for (const [k, v] of Object.entries(raw)) if (!(k in out)) out[k] = v;
  return out as C;
}

const isEvent = (c: Condition): boolean => (EVENT_KEYS as readonly string[]).includes(conditionKey(c));

/** True when the step carries branch properties: the engine decides its successor by them (engine/branching.ts). */
export function isBranching(step: { next?: unknown; else?: unknown } | undefined): boolean {
  return !!step && ((Array.isArray(step.next) && step.next.length > 0) || typeof step.else === 'string');
}

/** True when any step of the sequence branches. */
export const hasBranches = (steps: readonly { next?: unknown; else?: unknown }[]) => steps.some(isBranching);

/** True when the step has an edge on `allowed`: a step the engine may not do falls through instead of becoming a task. */
export const fallsThrough = (step: { next?: unknown } | undefined) =>
  !!step && Array.isArray(step.next) && (step.next as Edge[]).some((e) => e && typeof e.if === 'object' && e.if !== null && 'allowed' in e.if);

/** True when an edge of the step looks for a bounce (a bounce then routes the lead instead of failing it). */
export const routesBounce = (step: { next?: unknown } | undefined) =>
  !!step && Array.isArray(step.next) && (step.next as Edge[]).some((e) => e && typeof e.if === 'object' && e.if !== null && 'bounced' in e.if);

// ---------------------------------------------------------------- the graph

const STEP_CHANNEL: Record<string, string | undefined> = CHANNEL_OF_STEP;

/** Index of a target in the flat list; null for goal/exit; undefined when it names no step. */
function indexOf(steps: readonly BranchStep[], target: BranchTarget): number | null | undefined {
  if ((END_TARGETS as readonly string[]).includes(target)) return null;
  const i = steps.findIndex((s) => s.id === target);
  return i < 0 ? undefined : i;
}

/** Where a lead may go from step `i`: each edge's target, then `else` (without it, the next step; after the last, the end). */
export function successors(steps: readonly BranchStep[], i: number): { to: number | null; waits: boolean }[] {
  const s = steps[i];
  const out: { to: number | null; waits: boolean }[] = [];
  const fallback = s.else ?? null;
  for (const e of s.next ?? []) {
    const to = indexOf(steps, e.goto);
    if (to !== undefined) out.push({ to, waits: (e.withinDays ?? 0) > 0 });
  }
  if (fallback !== null) {
    const to = indexOf(steps, fallback);
    if (to !== undefined) out.push({ to, waits: (s.next ?? []).some((e) => (e.withinDays ?? 0) > 0) });
  } else out.push({ to: i + 1 < steps.length ? i + 1 : null, waits: (s.next ?? []).some((e) => (e.withinDays ?? 0) > 0) });
  return out;
}

const ID_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,39}$/;

/**
 * The graph's problems, each naming the field (`steps[i].next[j].goto`, …), for the authoring doors to refuse: ids
 * unique and well formed, every target a step id or goal/exit, every step reachable from the first, no cycle a lead could
 * run round without a wait, `withinDays` only on a condition about something that happens, and no condition that
 * cannot become true on the steps before it (an acceptance with no invitation, a bounce with no e-mail, a reply on a
 * channel no step before it used). An empty list: the graph is sound. A linear sequence always is.
 */
export function graphProblems(steps: readonly BranchStep[]): string[] {
  const problems: string[] = [];
  const ids = new Map<string, number>();
  steps.forEach((s, i) => {
    if (s.id === undefined) return;
    if (!ID_PATTERN.test(s.id) || (END_TARGETS as readonly string[]).includes(s.id))
      problems.push(`steps[${i}].id must be a letter then up to 39 letters, digits, _ or -, and not goal or exit`);
    else if (ids.has(s.id)) problems.push(`steps[${i}].id "${s.id}" is already the id of steps[${ids.get(s.id)}]`);
    else ids.set(s.id, i);
  });
  const target = (where: string, t: BranchTarget) => {
    if (indexOf(steps, t) === undefined) problems.push(`${where} "${t}" is neither a step id of this sequence nor goal or exit`);
  };
  steps.forEach((s, i) => {
    (s.next ?? []).forEach((e, j) => {
      const at = `steps[${i}].next[${j}]`;
      target(`${at}.goto`, e.goto);
      if (e.withinDays !== undefined && !isEvent(e.if))
        problems.push(`${at}.withinDays: only a condition about something that happens (${EVENT_KEYS.join(', ')}) can wait`);
      const field = e.if as { field?: string; equals?: string; contains?: string; exists?: boolean };
      if ('field' in e.if && [field.equals, field.contains, field.exists].filter((v) => v !== undefined).length !== 1)
        problems.push(`${at}.if: a field condition carries exactly one of equals, contains or exists`);
    });
    if (s.else !== undefined) target(`steps[${i}].else`, s.else);
  });
  if (problems.length > 0 || steps.length === 0) return problems;
  const reach = reachable(steps);
  steps.forEach((_, i) => {
    if (!reach.has(i)) problems.push(`steps[${i}] cannot be reached from the first step: give it an id and an edge into it, or remove it`);
  });
  const cycle = cycleWithoutWait(steps);
  if (cycle) problems.push(`steps ${cycle.map((i) => `[${i}]`).join(' → ')} form a cycle with no wait: give a step on it delayDays or an edge withinDays`);
  problems.push(...impossibleConditions(steps));
  return problems;
}

function reachable(steps: readonly BranchStep[]): Set<number> {
  const seen = new Set<number>([0]);
  const todo = [0];
  while (todo.length > 0) {
    const i = todo.pop()!;
    for (const { to } of successors(steps, i)) {
      if (to === null || seen.has(to)) continue;
      seen.add(to);
      todo.push(to);
    }
  }
  return seen;
}

/** A cycle whose every move is immediate (no edge wait, no delay on the step it enters), as step indexes, or null. */
function cycleWithoutWait(steps: readonly BranchStep[]): number[] | null {
  const state = new Map<number, 'open' | 'done'>();
  const path: number[] = [];
  const visit = (i: number): number[] | null => {
    state.set(i, 'open');
    path.push(i);
    for (const { to, waits } of successors(steps, i)) {
      if (to === null || waits || steps[to].delayDays > 0) continue;
      if (state.get(to) === 'open') return [...path.slice(path.indexOf(to)), to];
      if (!state.has(to)) {
        const found = visit(to);
        if (found) return found;
      }
    }
    path.pop();
    state.set(i, 'done');
    return null;
  };
  for (let i = 0; i < steps.length; i++) {
    if (state.has(i)) continue;
    const found = visit(i);
    if (found) return found;
  }
  return null;
}

/** Steps that can come before step `i` on some path from the first, `i` included. */
function stepsBefore(steps: readonly BranchStep[], i: number): Set<number> {
  const preds = new Map<number, number[]>();
  steps.forEach((_, a) => {
    for (const { to } of successors(steps, a)) if (to !== null) preds.set(to, [...(preds.get(to) ?? []), a]);
  });
  const seen = new Set<number>([i]);
  const todo = [i];
  while (todo.length > 0) {
    for (const p of preds.get(todo.pop()!) ?? []) {
      if (seen.has(p)) continue;
      seen.add(p);
      todo.push(p);
    }
  }
  return seen;
}

function impossibleConditions(steps: readonly BranchStep[]): string[] {
  const problems: string[] = [];
  steps.forEach((s, i) => {
    if (!s.next?.length) return;
    const before = [...stepsBefore(steps, i)].map((k) => steps[k]);
    const kinds = new Set(before.map((b) => b.kind));
    const channels = new Set<string | undefined>(before.map((b) => STEP_CHANNEL[b.kind]));
    s.next.forEach((e, j) => {
      const at = `steps[${i}].next[${j}].if`;
      const c = e.if as Record<string, unknown>;
      if ('accepted' in c && c.accepted === true && !kinds.has('connect'))
        problems.push(`${at}: "accepted" cannot become true: no connect step comes before it`);
      if ('bounced' in c && c.bounced === true && !kinds.has('email')) problems.push(`${at}: "bounced" cannot become true: no email step comes before it`);
      if ('replied' in c && c.replied === true && typeof c.channel === 'string' && !channels.has(c.channel))
        problems.push(`${at}: a reply on ${c.channel} cannot come: no ${c.channel} step comes before it`);
    });
  });
  return problems;
}

// ---------------------------------------------------------------- the evaluator

/** A reply as a condition reads it: when, on which channel, its label, and whether a person must still read it. */
export interface ReplyFact {
  at: Date;
  channel: string;
  classification: string;
  needsReview: boolean;
  /**
   * The step whose message the reply answers, and how that was found (replies.answers_*: by the e-mail thread, the
   * channel's conversation, or the latest step sent). Null: no step. Only replies answering the branching step count.
   */
  answers: { sequenceId: string; step: number; match: string } | null;
}

/** The saved facts a branch is decided from (never a live provider call). */
export interface BranchFacts {
  leadId: string;
  sequenceId: string;
  acceptedAt: Date | null;
  /** Real replies and out-of-office ones alike; the evaluator tells them apart by classification. */
  replies: readonly ReplyFact[];
  /** When a hard bounce was recorded on the lead (null: none). */
  bouncedAt: Date | null;
  meetingBookedAt: Date | null;
  addresses: Record<BranchChannel, boolean>;
  /** Lead fields by their API names, and `custom.<name>`. */
  fields: Record<string, string | null | undefined>;
  /** Whether the engine could do the step the lead just left for this person (null: not known, e.g. a task's step). */
  allowed: boolean | null;
}

/** The value a condition was decided on, recorded with the edge taken (`lead_paths.values`). */
export type DecidedValues = Record<string, string | number | boolean | null>;

export type BranchDecision =
  | { kind: 'take'; edge: number | null; goto: BranchTarget; to: number | null; outcome: EndTarget | null; values: DecidedValues; reason?: string }
  | { kind: 'wait'; until: Date };

/** A lead's draw for a split edge, 0 to 99: the same for the same lead, sequence and step, on every run and forecast. */
export function splitDraw(leadId: string, sequenceId: string, stepIndex: number): number {
  return createHash('sha256').update(`${leadId}:${sequenceId}:${stepIndex}:split`).digest().readUInt32BE(0) % 100;
}

const DAY = 86_400_000;

function intentMatches(intent: string | undefined, classification: string): boolean {
  if (intent === undefined) return true;
  return classification === intent || (CLASSIFICATIONS.includes(classification as Classification) && sentimentOf(classification as Classification) === intent);
}

/**
 * When the thing an event condition names happened (`at`, null: not on record), and whether it can no longer happen
 * (`never`). A reply (and an out-of-office) counts only when it answers step `stepIndex` of the lead's sequence: a
 * reply routes by the message it answers (docs/sequences-and-leads.md "Which step a reply answers"). A reply condition
 * with an intent is decided by the first such reply on that channel, so a first reply of another intent settles it as
 * not happened. `match` says how the deciding reply was tied to the step.
 */
function happenedAt(c: Condition, f: BranchFacts, stepIndex: number): { at: Date | null; never: boolean; match?: string } {
  const first = (list: readonly ReplyFact[]) => list.reduce<ReplyFact | null>((m, r) => (m === null || r.at < m.at ? r : m), null);
  const on = (at: Date | null) => ({ at, never: false });
  const answering = () => f.replies.filter((r) => r.answers !== null && r.answers.sequenceId === f.sequenceId && r.answers.step === stepIndex);
  if ('accepted' in c) return on(f.acceptedAt);
  if ('bounced' in c) return on(f.bouncedAt);
  if ('meetingBooked' in c) return on(f.meetingBookedAt);
  if ('outOfOffice' in c) {
    const away = first(answering().filter((r) => r.classification === 'out_of_office'));
    return away ? { at: away.at, never: false, match: away.answers!.match } : on(null);
  }
  if ('replied' in c) {
    // A reply a person must still read never matches (docs/sequences-and-leads.md); nor does an out-of-office one.
    const answer = first(
      answering().filter((r) => !r.needsReview && r.classification !== 'out_of_office' && (c.channel === undefined || r.channel === c.channel)),
    );
    if (answer === null) return on(null);
    return intentMatches(c.intent, answer.classification) ? { at: answer.at, never: false, match: answer.answers!.match } : { at: null, never: true };
  }
  return on(null);
}

function eventValue(c: Condition): boolean {
  const v = (c as Record<string, unknown>)[conditionKey(c)];
  return v === true;
}

/** A condition about the lead as it stands: true or false at once. */
function staticHolds(c: Condition, f: BranchFacts, stepIndex: number): { holds: boolean; value: string | number | boolean | null } {
  if ('hasAddress' in c) return { holds: f.addresses[c.hasAddress], value: f.addresses[c.hasAddress] };
  if ('lacksAddress' in c) return { holds: !f.addresses[c.lacksAddress], value: f.addresses[c.lacksAddress] };
  if ('allowed' in c) return { holds: f.allowed === c.allowed, value: f.allowed };
  if ('split' in c) {
    const draw = splitDraw(f.leadId, f.sequenceId, stepIndex);
    return { holds: draw < c.split, value: draw };
  }
  if ('field' in c) {
    const raw = f.fields[c.field];
    const text = typeof raw === 'string' ? raw.trim() : '';
    if (c.exists !== undefined) return { holds: (text !== '') === c.exists, value: text !== '' };
    if (c.equals !== undefined) return { holds: text.toLocaleLowerCase() === c.equals.trim().toLocaleLowerCase(), value: text };
    return { holds: text.toLocaleLowerCase().includes((c.contains ?? '').trim().toLocaleLowerCase()), value: text };
  }
  return { holds: false, value: null };
}

/**
 * Decides where a lead that left step `stepIndex` at `arrivedAt` goes, as of `now`, from saved facts only. Edges are
 * tried in order and the first that holds wins; one that cannot be decided yet (its event may still come inside its
 * `withinDays`) makes the lead wait until its window closes (an acceptance, a booking or a released reply makes the
 * engine look again sooner). An event condition without `withinDays` is read as it stands on arrival. (A booking,
 * the goal of every branching sequence, stops the lead's lanes when it is recorded: domain/lanes.ts recordBookingGoal.)
 */
export function decideBranch(steps: readonly BranchStep[], stepIndex: number, facts: BranchFacts, arrivedAt: Date, now: Date): BranchDecision {
  const step = steps[stepIndex];
  const end = (goto: BranchTarget) => {
    const to = indexOf(steps, goto);
    return {
      to: to ?? null,
      outcome: to === null || to === undefined ? ((END_TARGETS as readonly string[]).includes(goto) ? (goto as EndTarget) : 'exit') : null,
    };
  };
  let waitUntil: Date | null = null;
  for (const [j, e] of (step.next ?? []).entries()) {
    const c = e.if;
    const key = conditionKey(c);
    if ((EVENT_KEYS as readonly string[]).includes(key)) {
      const deadline = new Date(arrivedAt.getTime() + (e.withinDays ?? 0) * DAY);
      const { at, never, match } = happenedAt(c, facts, stepIndex);
      const happened = at !== null && at <= deadline && at <= now;
      const decided = happened || never || now >= deadline;
      if (!decided) {
        waitUntil = deadline;
        break;
      }
      if (happened === eventValue(c)) {
        const values: DecidedValues = {
          [key]: happened,
          ...(at && { at: at.toISOString() }),
          ...(e.withinDays !== undefined && { withinDays: e.withinDays }),
          ...(happened && match && { matchedBy: match }),
        };
        return { kind: 'take', edge: j, goto: e.goto, ...end(e.goto), values };
      }
      continue;
    }
    const r = staticHolds(c, facts, stepIndex);
    // A field condition records the field it read under its own name (`{"title": "Co-Founder"}`).
    if (r.holds) return { kind: 'take', edge: j, goto: e.goto, ...end(e.goto), values: { ['field' in c ? c.field : key]: r.value } };
  }
  if (waitUntil) return { kind: 'wait', until: waitUntil };
  const fallback = step.else ?? (stepIndex + 1 < steps.length ? (steps[stepIndex + 1].id ?? `#${stepIndex + 1}`) : 'done');
  if (fallback.startsWith('#')) return { kind: 'take', edge: null, goto: fallback, to: stepIndex + 1, outcome: null, values: {} };
  // Without `else`, past the last step the run ends as a linear one does: done, with no outcome of its own.
  if (step.else === undefined) return { kind: 'take', edge: null, goto: 'done', to: null, outcome: null, values: {} };
  return { kind: 'take', edge: null, goto: fallback, ...end(fallback), values: {} };
}
