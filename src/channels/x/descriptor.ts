import { X_DM_DAILY_LIMIT } from './dm-sends.repository.js';
import { sql } from 'kysely';
import { BUDGET_WINDOWS, xAccountBudgetKey, type XBudget } from '../../domain/budgets.js';
import type { ChannelDescriptor, Step } from '../descriptor.js';
import { createSandboxDriver } from '../sandbox/driver.js';
import { createXDriver } from './driver.js';
import { createXWatcher } from './watcher.js';
import { readXSenders } from './oauth.repository.js';
import { xConversationUrl, xProfileUrl } from './links.js';

/** The ledger action of an X engage step, by its first action's type. */
const X_ENGAGE_ACTION: Record<string, string> = { follow: 'x_follow', like: 'x_like', like_last_post: 'x_like', react: 'x_like' };

/** An `x_engage` step that follows the person: the X lane's invitation. */
/** The budgets a connected X account holds, as BUDGET_WINDOWS names them; a sandbox account's draw none. */
const X_BUDGETS = Object.keys(BUDGET_WINDOWS.x_account) as XBudget[];

const isFollow = (step: Step) => step.kind === 'x_engage' && (step.actions ?? []).some((a) => a?.type?.toLowerCase() === 'follow');

/**
 * X (docs/x.md): through the X API v2 for every X account connected with OAuth, the sandbox for the rest. Steps go
 * through the lead's (or its Play's) X account, not a messaging account, and are not paced on one: a connected
 * account's daily DMs are reserved at claim, its follows (a person's click) by the driver, both capped by `budgetCap`;
 * GET /progress lists them under `platformAccounts` (`platformSenders`).
 */
export const xChannel: ChannelDescriptor = {
  channel: 'x',
  stepKinds: ['x_dm', 'x_engage'],
  labels: { name: 'X', summaryKey: 'xAccounts' },
  createDriver({ config, x }) {
    const engine = config.engine;
    const fallback = createSandboxDriver('x', engine.sandbox);
    if (!x) return fallback;
    return {
      ...createXDriver({
        ...x,
        fallback,
        caps: { dmsPerDay: Math.min(engine.pacing.messageCap, X_DM_DAILY_LIMIT), followsPerDay: engine.pacing.inviteCap },
        engageApi: config.x.engageApi,
      }),
      watch: createXWatcher({ ...x, config: { pollIntervalSeconds: engine.xPollSeconds, observeDays: engine.observeDays } }).watch,
    };
  },
  actionOf(step) {
    if (step.kind === 'x_dm') return 'x_dm';
    return X_ENGAGE_ACTION[(step.actions ?? [])[0]?.type?.toLowerCase() ?? ''] ?? 'x_like';
  },
  eventOf: (step) => (step.kind === 'x_dm' ? { event: 'lead.messaged', channel: 'x' } : null),
  // A connected account's DMs and follows draw its UTC day's caps (the sandbox's draw none, as X is not asked). The
  // claim reserves a DM's unit; a follow is a person's click, whose unit the driver takes within the same cap.
  budgetsOf(step, sender, at) {
    if (!sender.accountUserId || sender.delivery !== 'x_connected') return [];
    if (step.kind === 'x_dm') return [xAccountBudgetKey(sender.workspaceId, sender.accountUserId, 'dms', at)];
    return isFollow(step) ? [xAccountBudgetKey(sender.workspaceId, sender.accountUserId, 'follows', at)] : [];
  },
  async platformSenders(db, workspaceId, at) {
    const accounts = await readXSenders(db, workspaceId);
    return accounts.map((a) => ({
      ...a,
      delivery: a.connected ? 'x_connected' : 'sandbox',
      budgets: a.connected ? X_BUDGETS.map((b) => xAccountBudgetKey(workspaceId, a.accountUserId, b, at)) : [],
    }));
  },
  // X allows 1,440 DMs per user per 24 hours (docs/policy.md): the day's DM cap never exceeds it.
  budgetCap: (key, config) =>
    key.budget === 'dms' ? Math.min(config.engine.pacing.messageCap, X_DM_DAILY_LIMIT) : key.budget === 'follows' ? config.engine.pacing.inviteCap : null,
  missingAddress: (recipient) => (recipient.xUserId ? null : 'missing_x_user_id'),
  sendsFrom: 'account_user',
  invites: isFollow,
  invitedColumn: 'followed_at',
  hears: ['followed_back'],
  answered: {
    action: 'x_follow_back',
    event: 'x.followed',
    eventData: (lead) => ({
      accountUserId: lead.x_account_user_id,
      follower: { xUserId: lead.x_user_id, username: lead.username },
      leadId: lead.id,
      source: 'follow_back',
    }),
  },
  answersOnPlatform: true,
  performedByClick: true,
  conversationUrl: xConversationUrl,
  profileUrl: xProfileUrl,
  // Connected with OAuth 2.0: the real X API (domain/policy.ts `x_connected`); never connected: the sandbox.
  deliverySql: (refs) =>
    sql<string>`CASE WHEN EXISTS (SELECT 1 FROM x_account_oauth o WHERE o.workspace_id = ${refs.workspaceId} AND o.user_id = ${refs.accountUserId})
      THEN 'x_connected' ELSE 'sandbox' END`,
};
