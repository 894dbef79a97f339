import { describe, expect, it } from 'vitest';
import { decideBranch, graphProblems, splitDraw, type BranchFacts, type BranchStep, type Condition } from '../../src/domain/branches.js';

// The branch grammar's evaluator and graph checks (docs/sequences-and-leads.md "Branches"): every condition true,
// false, not yet known and timed out, from saved facts only. The engine runs the same function (test/engine/branches).

const T0 = new Date('2026-11-02T09:00:00.000Z');
const DAY = 86_400_000;
const at = (days: number) => new Date(T0.getTime() + days * DAY);

const facts = (f: Partial<BranchFacts> = {}): BranchFacts => ({
  leadId: '00000000-0000-4000-8000-000000000001',
  sequenceId: '00000000-0000-4000-8000-000000000002',
  acceptedAt: null,
  replies: [],
  bouncedAt: null,
  meetingBookedAt: null,
  addresses: { email: true, linkedin: true, x: false },
  fields: { title: 'Head of Sales', 'custom.plan': 'Pro' },
  allowed: true,
  ...f,
});

/** A two-step graph: step 0 with one edge to `yes`, else `no`. */
const graph = (cond: Condition, withinDays?: number): BranchStep[] => [
  { kind: 'connect', delayDays: 0, next: [{ if: cond, ...(withinDays && { withinDays }), goto: 'yes' }], else: 'no' },
  { kind: 'message', delayDays: 0, id: 'yes', else: 'exit' },
  { kind: 'email', delayDays: 0, id: 'no' },
];
const where = (cond: Condition, f: Partial<BranchFacts>, now: Date, withinDays?: number) => {
  const d = decideBranch(graph(cond, withinDays), 0, facts(f), T0, now);
  return d.kind === 'wait' ? `wait:${d.until.toISOString()}` : d.goto;
};

describe('event conditions: true, false, not yet known, timed out', () => {
  // A reply answering step 0 of the lead's sequence (how it was tied: `match`), unless `step` names another.
  const reply = (classification: string, days: number, more: { channel?: string; needsReview?: boolean; step?: number; sequenceId?: string } = {}) => ({
    at: at(days),
    channel: more.channel ?? 'email',
    classification,
    needsReview: more.needsReview ?? false,
    answers: { sequenceId: more.sequenceId ?? facts().sequenceId, step: more.step ?? 0, match: 'thread' },
  });
  const cases: { name: string; cond: Condition; happened: Partial<BranchFacts>; late: Partial<BranchFacts> }[] = [
    { name: 'accepted', cond: { accepted: true }, happened: { acceptedAt: at(1) }, late: { acceptedAt: at(4) } },
    { name: 'replied', cond: { replied: true }, happened: { replies: [reply('question', 1)] }, late: { replies: [reply('question', 4)] } },
    { name: 'outOfOffice', cond: { outOfOffice: true }, happened: { replies: [reply('out_of_office', 1)] }, late: { replies: [reply('out_of_office', 4)] } },
    { name: 'bounced', cond: { bounced: true }, happened: { bouncedAt: at(1) }, late: { bouncedAt: at(4) } },
    { name: 'meetingBooked', cond: { meetingBooked: true }, happened: { meetingBookedAt: at(1) }, late: { meetingBookedAt: at(4) } },
  ];
  for (const c of cases) {
    it(`${c.name}: within 3 days`, () => {
      expect(where(c.cond, c.happened, at(2), 3)).toBe('yes');
      expect(where(c.cond, {}, at(2), 3)).toBe(`wait:${at(3).toISOString()}`);
      expect(where(c.cond, {}, at(3), 3)).toBe('no');
      // Too late for the window: decided false when it closed, whatever came after.
      expect(where(c.cond, c.late, at(5), 3)).toBe('no');
      // The negation holds exactly when the positive does not.
      const negated = { ...c.cond, [Object.keys(c.cond)[0]]: false };
      expect(where(negated, c.happened, at(2), 3)).toBe('no');
      expect(where(negated, {}, at(2), 3)).toBe(`wait:${at(3).toISOString()}`);
      expect(where(negated, {}, at(3), 3)).toBe('yes');
      // Without a window: read as it stands on arrival.
      expect(where(c.cond, {}, T0)).toBe('no');
    });
  }

  it('a reply with an intent is decided by the first reply; one under review or out of office never matches', () => {
    const positive: Condition = { replied: true, intent: 'positive' };
    expect(where(positive, { replies: [reply('meeting_intent', 1)] }, at(1), 5)).toBe('yes');
    expect(where(positive, { replies: [reply('negative', 1)] }, at(1), 5)).toBe('no');
    expect(where(positive, { replies: [reply('positive', 1, { needsReview: true })] }, at(1), 5)).toBe(`wait:${at(5).toISOString()}`);
    expect(where({ replied: true }, { replies: [reply('out_of_office', 1)] }, at(1), 5)).toBe(`wait:${at(5).toISOString()}`);
    expect(where({ replied: true, channel: 'linkedin' }, { replies: [reply('positive', 1, { channel: 'email' })] }, at(5), 5)).toBe('no');
    expect(where({ replied: true, intent: 'unsubscribe' }, { replies: [reply('unsubscribe', 1)] }, at(1), 5)).toBe('yes');
  });

  it('a reply routes by the message it answers: one answering another step, another sequence or no step never counts', () => {
    const cond: Condition = { replied: true };
    const earlier = reply('positive', 1, { step: 3 });
    expect(where(cond, { replies: [earlier] }, at(2), 3)).toBe(`wait:${at(3).toISOString()}`);
    expect(where(cond, { replies: [earlier] }, at(3), 3)).toBe('no');
    expect(where(cond, { replies: [reply('positive', 1, { sequenceId: '00000000-0000-4000-8000-000000000009' })] }, at(3), 3)).toBe('no');
    expect(where(cond, { replies: [{ ...reply('positive', 1), answers: null }] }, at(3), 3)).toBe('no');
    // The one answering this step decides, though another reply came first; the path says how it was tied.
    const d = decideBranch(graph(cond, 3), 0, facts({ replies: [reply('negative', 0.5, { step: 2 }), reply('question', 1)] }), T0, at(2));
    expect(d).toMatchObject({ kind: 'take', goto: 'yes', values: { replied: true, at: at(1).toISOString(), matchedBy: 'thread' } });
    expect(where({ replied: true, intent: 'positive' }, { replies: [reply('negative', 0.5, { step: 2 }), reply('positive', 1)] }, at(2), 3)).toBe('yes');
  });

  it('the first edge that holds wins; an earlier edge not yet known holds the lead', () => {
    const steps: BranchStep[] = [
      {
        kind: 'email',
        delayDays: 0,
        next: [
          { if: { replied: true }, withinDays: 2, goto: 'goal' },
          { if: { hasAddress: 'email' }, goto: 'b' },
        ],
        else: 'exit',
      },
      { kind: 'email', delayDays: 0, id: 'b' },
    ];
    expect(decideBranch(steps, 0, facts(), T0, at(1))).toEqual({ kind: 'wait', until: at(2) });
    expect(decideBranch(steps, 0, facts(), T0, at(2))).toMatchObject({ kind: 'take', edge: 1, goto: 'b', to: 1, outcome: null });
    expect(decideBranch(steps, 0, facts({ replies: [reply('positive', 1)] }), T0, at(1))).toMatchObject({ edge: 0, goto: 'goal', to: null, outcome: 'goal' });
  });
});

describe('conditions read at once', () => {
  it('addresses, allowed, fields and the split', () => {
    expect(where({ hasAddress: 'email' }, {}, T0)).toBe('yes');
    expect(where({ hasAddress: 'x' }, {}, T0)).toBe('no');
    expect(where({ lacksAddress: 'x' }, {}, T0)).toBe('yes');
    expect(where({ allowed: false }, { allowed: false }, T0)).toBe('yes');
    expect(where({ allowed: false }, { allowed: true }, T0)).toBe('no');
    expect(where({ allowed: true }, { allowed: null }, T0)).toBe('no');
    expect(where({ field: 'title', contains: 'SALES' }, {}, T0)).toBe('yes');
    expect(where({ field: 'title', equals: ' head of sales ' }, {}, T0)).toBe('yes');
    expect(where({ field: 'company', exists: true }, {}, T0)).toBe('no');
    expect(where({ field: 'company', exists: false }, {}, T0)).toBe('yes');
    expect(where({ field: 'custom.plan', equals: 'pro' }, {}, T0)).toBe('yes');
    const draw = splitDraw(facts().leadId, facts().sequenceId, 0);
    expect(draw).toBeGreaterThanOrEqual(0);
    expect(draw).toBeLessThan(100);
    expect(where({ split: draw + 1 > 99 ? 99 : draw + 1 }, {}, T0)).toBe(draw + 1 > 99 ? 'no' : 'yes');
    expect(where({ split: Math.max(1, draw) }, {}, T0)).toBe(draw === 0 ? 'yes' : 'no');
  });

  it('the split divides many leads near its weight, the same way every time', () => {
    let hits = 0;
    for (let i = 0; i < 2000; i++) if (splitDraw(`lead-${i}`, 'seq', 3) < 30) hits += 1;
    expect(hits).toBeGreaterThan(520);
    expect(hits).toBeLessThan(680);
    expect(splitDraw('lead-1', 'seq', 3)).toBe(splitDraw('lead-1', 'seq', 3));
  });

  it('without else, past the last step the run is done; else goal and exit end it with that outcome', () => {
    const last: BranchStep[] = [{ kind: 'email', delayDays: 0, next: [{ if: { hasAddress: 'x' }, goto: 'goal' }] }];
    expect(decideBranch(last, 0, facts(), T0, T0)).toMatchObject({ goto: 'done', to: null, outcome: null });
    expect(decideBranch([{ ...last[0], else: 'exit' }], 0, facts(), T0, T0)).toMatchObject({ goto: 'exit', outcome: 'exit' });
  });
});

describe('the graph checks', () => {
  const linear: BranchStep[] = [
    { kind: 'connect', delayDays: 0 },
    { kind: 'message', delayDays: 1 },
  ];
  it('a linear sequence is sound', () => expect(graphProblems(linear)).toEqual([]));

  it('refuses unknown targets, duplicate ids, unreachable steps, immediate cycles, impossible conditions and waits on static conditions', () => {
    const problems = (steps: BranchStep[]) => graphProblems(steps).join('\n');
    expect(problems([{ kind: 'connect', delayDays: 0, else: 'nowhere' }])).toMatch(/steps\[0\]\.else "nowhere" is neither a step id/);
    expect(
      problems([
        { kind: 'connect', delayDays: 0, id: 'a' },
        { kind: 'message', delayDays: 0, id: 'a' },
      ]),
    ).toMatch(/already the id of steps\[0\]/);
    expect(
      problems([
        { kind: 'email', delayDays: 0, else: 'exit' },
        { kind: 'email', delayDays: 0, id: 'orphan' },
      ]),
    ).toMatch(/steps\[1\] cannot be reached/);
    expect(
      problems([
        { kind: 'email', delayDays: 0, id: 'a' },
        { kind: 'email', delayDays: 0, id: 'b', else: 'a' },
      ]),
    ).toMatch(/cycle with no wait/);
    // The same loop with a wait on it is allowed.
    expect(
      problems([
        { kind: 'email', delayDays: 0, id: 'a' },
        { kind: 'email', delayDays: 2, id: 'b', next: [{ if: { replied: true }, goto: 'exit' }], else: 'a' },
      ]),
    ).toBe('');
    expect(problems([{ kind: 'email', delayDays: 0, next: [{ if: { accepted: true }, goto: 'exit' }] }])).toMatch(/"accepted" cannot become true/);
    expect(problems([{ kind: 'connect', delayDays: 0, next: [{ if: { bounced: true }, goto: 'exit' }] }])).toMatch(/"bounced" cannot become true/);
    expect(problems([{ kind: 'email', delayDays: 0, next: [{ if: { replied: true, channel: 'x' }, goto: 'exit' }] }])).toMatch(/a reply on x cannot come/);
    expect(problems([{ kind: 'email', delayDays: 0, next: [{ if: { hasAddress: 'email' }, withinDays: 2, goto: 'exit' }] }])).toMatch(
      /withinDays: only a condition about something that happens/,
    );
    expect(problems([{ kind: 'email', delayDays: 0, next: [{ if: { field: 'title' }, goto: 'exit' }] }])).toMatch(/exactly one of equals, contains or exists/);
    expect(problems([{ kind: 'email', delayDays: 0, id: 'goal' }])).toMatch(/not goal or exit/);
  });
});
