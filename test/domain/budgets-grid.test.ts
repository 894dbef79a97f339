import { describe, expect, it } from 'vitest';
import { createChannelRegistry, type ChannelDescriptor, type Sender, type Step } from '../../src/channels/index.js';
import { BUDGET_WINDOWS, budgetsOf, gatewayBudgetKey, type BudgetKey } from '../../src/domain/budgets.js';
import type { Config } from '../../src/config/config.js';

// Issue 41 part 2: the budgets a step draws from its sender, decided once (domain/budgets.ts `budgetsOf`, fed by the
// channel descriptors). The grid: every step kind (and the engage actions that change it) × every kind of sender
// → the keys and their windows. Like test/domain/opt-out-matrix.test.ts, one table pins every cell.

const channels = createChannelRegistry();
const WS = 'ws_1';
// 23:30 UTC on 2026-11-24 is already 2026-11-25 in Berlin: a local-day key and a UTC-day key differ here.
const AT = new Date('2026-11-24T23:30:00.000Z');

const SENDERS = {
  none: { workspaceId: WS, accountId: null, accountUserId: null, timeZone: null, warmupStartedAt: null, delivery: 'sandbox' },
  account: { workspaceId: WS, accountId: 'acc_1', accountUserId: null, timeZone: 'Europe/Berlin', warmupStartedAt: null, delivery: 'sandbox' },
  accountUser: { workspaceId: WS, accountId: null, accountUserId: '42', timeZone: null, warmupStartedAt: null, delivery: 'x_connected' },
  both: { workspaceId: WS, accountId: 'acc_1', accountUserId: '42', timeZone: 'Europe/Berlin', warmupStartedAt: null, delivery: 'x_connected' },
  // A LinkedIn account linked to the gateway: its invitations and messages also draw the gateway's caps.
  gateway: { workspaceId: WS, accountId: 'acc_1', accountUserId: null, timeZone: 'Europe/Berlin', warmupStartedAt: null, delivery: 'gateway' },
  // An X account never connected: the sandbox serves it and X's caps are not drawn.
  xSandbox: { workspaceId: WS, accountId: null, accountUserId: '42', timeZone: null, warmupStartedAt: null, delivery: 'sandbox' },
} satisfies Record<string, Sender>;

const step = (kind: string, action?: string) => ({ kind, actions: action ? [{ type: action, count: null, reaction: null }] : [] }) as unknown as Step;

const STEPS: Record<string, Step> = {
  connect: step('connect'),
  message: step('message'),
  'engage (like)': step('engage', 'like'),
  email: step('email'),
  x_dm: step('x_dm'),
  'x_engage (follow)': step('x_engage', 'follow'),
  'x_engage (like)': step('x_engage', 'like'),
  instagram_dm: step('instagram_dm'),
};

/** A key as the grid writes it: `scope:scopeId:budget:window:day`. */
const cell = (keys: BudgetKey[]) => keys.map((k) => `${k.scope}:${k.scopeId}:${k.budget}:${k.window}:${k.windowStart}`);

const ACCOUNT = (budget: string) => [
  `account:acc_1:${budget}:local_day:2026-11-25`,
  ...(budget === 'actions' ? [] : ['account:acc_1:actions:local_day:2026-11-25']),
];

const GATEWAY = (budget: 'invites' | 'messages') =>
  budget === 'invites' ? 'linkedin_gateway:acc_1:invites:rolling_week:2026-11-25' : 'linkedin_gateway:acc_1:messages:utc_day:2026-11-24';
const NONE = { none: [], account: [], accountUser: [], both: [], gateway: [], xSandbox: [] };

const GRID: Record<string, Record<keyof typeof SENDERS, string[]>> = {
  connect: { ...NONE, account: ACCOUNT('invites'), both: ACCOUNT('invites'), gateway: [...ACCOUNT('invites'), GATEWAY('invites')] },
  message: { ...NONE, account: ACCOUNT('messages'), both: ACCOUNT('messages'), gateway: [...ACCOUNT('messages'), GATEWAY('messages')] },
  'engage (like)': { ...NONE, account: ACCOUNT('actions'), both: ACCOUNT('actions'), gateway: ACCOUNT('actions') },
  email: { ...NONE, account: ACCOUNT('messages'), both: ACCOUNT('messages'), gateway: ACCOUNT('messages') },
  x_dm: { ...NONE, accountUser: ['x_account:42:dms:utc_day:2026-11-24'], both: ['x_account:42:dms:utc_day:2026-11-24'] },
  'x_engage (follow)': { ...NONE, accountUser: ['x_account:42:follows:utc_day:2026-11-24'], both: ['x_account:42:follows:utc_day:2026-11-24'] },
  'x_engage (like)': NONE,
  instagram_dm: { ...NONE, account: ACCOUNT('messages'), both: ACCOUNT('messages'), gateway: ACCOUNT('messages') },
};

describe('budgetsOf: step kind × sender → keys and windows', () => {
  for (const [name, s] of Object.entries(STEPS)) {
    for (const sender of Object.keys(SENDERS) as (keyof typeof SENDERS)[]) {
      it(`${name} from ${sender}`, () => {
        const keys = budgetsOf(channels.ofStepKind(s.kind), s, SENDERS[sender], AT);
        expect(cell(keys)).toEqual(GRID[name][sender]);
        const windows: Record<string, Record<string, string>> = BUDGET_WINDOWS;
        for (const k of keys) expect(windows[k.scope][k.budget]).toBe(k.window);
      });
    }
  }

  it('covers every step kind a built-in channel carries', () => {
    const kinds = new Set<string>(Object.values(STEPS).map((s) => s.kind));
    for (const d of channels.all()) for (const kind of d.stepKinds) expect(kinds.has(kind)).toBe(true);
  });

  it('a step kind no channel carries draws nothing', () => {
    expect(budgetsOf(channels.ofStepKind('pigeon_dm'), step('pigeon_dm'), SENDERS.both, AT)).toEqual([]);
  });

  it("a LinkedIn gateway account's invitations count a rolling week of its local days, its messages the UTC day", () => {
    expect(cell([gatewayBudgetKey(WS, 'acc_1', 'invites', AT, 'Europe/Berlin'), gatewayBudgetKey(WS, 'acc_1', 'messages', AT, 'Europe/Berlin')])).toEqual([
      'linkedin_gateway:acc_1:invites:rolling_week:2026-11-25',
      'linkedin_gateway:acc_1:messages:utc_day:2026-11-24',
    ]);
    // A gateway key passes the same window check as a descriptor's.
    const gateway: ChannelDescriptor = {
      ...channels.ofChannel('linkedin')!,
      budgetsOf: (_s, sender, at) => [gatewayBudgetKey(sender.workspaceId, 'acc_1', 'invites', at, null)],
    };
    expect(budgetsOf(gateway, STEPS.connect, SENDERS.account, AT)).toHaveLength(1);
  });

  it("caps come from the channel's descriptor and the process's settings: the gateway's from OUTREACH_LINKEDIN_*, X's from the pacing caps", () => {
    const config = { linkedin: { invitesPerWeek: 80, messagesPerDay: 40 }, engine: { pacing: { messageCap: 25, inviteCap: 15 } } } as unknown as Config;
    const capOf = (kind: string, s: Step, sender: Sender) =>
      budgetsOf(channels.ofStepKind(kind), s, sender, AT).map((k) => channels.ofStepKind(kind)!.budgetCap?.(k, config) ?? null);
    expect(capOf('connect', STEPS.connect, SENDERS.gateway)).toEqual([null, null, 80]);
    expect(capOf('message', STEPS.message, SENDERS.gateway)).toEqual([null, null, 40]);
    expect(capOf('x_dm', STEPS.x_dm, SENDERS.accountUser)).toEqual([25]);
    expect(capOf('x_engage', STEPS['x_engage (follow)'], SENDERS.accountUser)).toEqual([15]);
  });

  it('refuses a key whose window is not the one BUDGET_WINDOWS gives its scope and budget', () => {
    const wrong: ChannelDescriptor = {
      ...channels.ofChannel('email')!,
      budgetsOf: (_s, sender, at) => [
        {
          workspaceId: sender.workspaceId,
          scope: 'account',
          scopeId: 'acc_1',
          budget: 'messages',
          window: 'utc_day',
          windowStart: at.toISOString().slice(0, 10),
        },
      ],
    };
    expect(() => budgetsOf(wrong, STEPS.email, SENDERS.account, AT)).toThrow(/BUDGET_WINDOWS/);
  });
});
