import { linkedinCanonicalUrlOf } from '../../domain/linkedin-profile.js';
import { sql } from 'kysely';
import { accountDeliverySql } from '../../domain/claim-layout.js';
import { accountBudgetKeys, gatewayBudgetKey, type AccountBudget, type BudgetKey } from '../../domain/budgets.js';
import { safeZone } from '../../domain/time.js';
import { simulatesObservations } from '../../domain/policy.js';
import { MESSAGE_KINDS, type LinkedinDeliveryMode } from '../../domain/vocabulary.js';
import type { ChannelDescriptor, Sender, Step } from '../descriptor.js';
import { createSandboxDriver } from '../sandbox/driver.js';
import { createLinkedinDriver } from './driver.js';
import { createLinkedinWatcher } from './watcher.js';

const isMessage = (kind: string) => (MESSAGE_KINDS as readonly string[]).includes(kind);

/** The ledger action of a LinkedIn engage step, by its first action's type. */
const ENGAGE_ACTION: Record<string, string> = {
  like: 'like',
  like_last_post: 'like',
  react: 'like',
  comment: 'comment',
  endorse: 'endorse',
  view_profile: 'view_profile',
  view: 'view_profile',
};

/** The messaging account budget a LinkedIn step draws (engine/pacing.ts): invitations, messages, or plain actions. */
function accountBudgetOf(step: Step): AccountBudget {
  if (step.kind === 'connect') return 'invites';
  return isMessage(step.kind) ? 'messages' : 'actions';
}

/** A gateway account's budgets (domain/budgets.ts `gatewayBudgetKey`), of `budgets`; none for any other account. */
function gatewayKeys(sender: Sender, at: Date, budgets: readonly ('invites' | 'messages' | 'notes')[]): BudgetKey[] {
  if (sender.delivery !== 'gateway' || !sender.accountId) return [];
  return budgets.map((b) => gatewayBudgetKey(sender.workspaceId, sender.accountId!, b, at, safeZone(sender.timeZone)));
}

/** The gateway's budget a step of a gateway account draws: an invitation's or a message's; none for engage. */
function gatewayKeysOf(step: Step, sender: Sender, at: Date): BudgetKey[] {
  if (step.kind !== 'connect' && step.kind !== 'message') return [];
  return gatewayKeys(sender, at, [step.kind === 'connect' ? 'invites' : 'messages']);
}

/**
 * LinkedIn (docs/linkedin.md): per account, the sandbox, tasks or the LinkedIn gateway. A `connect` is its
 * invitation (heard back as `invite_accepted`); a `message` after an invitation waits for the acceptance.
 */
export const linkedinChannel: ChannelDescriptor = {
  channel: 'linkedin',
  stepKinds: ['connect', 'message', 'engage'],
  labels: { name: 'LinkedIn', summaryKey: 'linkedinAccounts' },
  createDriver({ config, linkedin }) {
    const fallback = createSandboxDriver('linkedin', config.engine.sandbox);
    if (!linkedin) return fallback;
    return { ...createLinkedinDriver({ db: linkedin.db, config, fallback }), watch: createLinkedinWatcher({ db: linkedin.db, config }).watch };
  },
  actionOf(step, alreadyMessaged = false) {
    if (step.kind === 'connect') return 'invite';
    if (step.kind === 'message') return alreadyMessaged ? 'followup' : 'message';
    return ENGAGE_ACTION[(step.actions ?? [])[0]?.type?.toLowerCase() ?? ''] ?? 'like';
  },
  eventOf(step) {
    if (step.kind === 'connect') return { event: 'lead.invited' };
    if (step.kind === 'message') return { event: 'lead.messaged' };
    return null;
  },
  accountBudgetOf,
  // A gateway account's invitations and messages also draw the gateway's own caps (rolling week, UTC day), reserved
  // at claim with the account's pacing and given back with it when LinkedIn did not act.
  budgetsOf: (step, sender, at) => [...accountBudgetKeys(sender, accountBudgetOf(step), at), ...gatewayKeysOf(step, sender, at)],
  // The notes are the driver's to take at send time (an invitation goes without its note past them): listed, not claimed.
  accountBudgets: (sender, at) => gatewayKeys(sender, at, ['invites', 'messages', 'notes']),
  budgetCap: (key, config) => {
    if (key.scope !== 'linkedin_gateway') return null;
    const caps: Record<string, number> = { invites: config.linkedin.invitesPerWeek, notes: config.linkedin.notesPerMonth };
    return caps[key.budget] ?? config.linkedin.messagesPerDay;
  },
  // The canonical profile address, never the URL as typed (domain/linkedin-profile.ts).
  profileUrl: (lead) => linkedinCanonicalUrlOf(lead.linkedin_url),
  invites: (step) => step.kind === 'connect',
  invitedColumn: 'invited_at',
  hears: ['invite_accepted'],
  answered: { action: 'accepted', event: 'lead.accepted' },
  // A tasks account has no watcher to hear the acceptance: its message task opens when due, and the person sends it
  // once they see the invitation accepted (docs/tasks.md).
  waitsForAcceptance: (step, lead, delivery) => step.kind === 'message' && !!lead.invited_at && !lead.connected_at && delivery !== 'tasks',
  deliverySql: (refs) => sql<string>`COALESCE(${accountDeliverySql(refs.account)}, 'sandbox')`,
  simulatesObservations: (accountDelivery) => simulatesObservations('linkedin', accountDelivery as LinkedinDeliveryMode | null),
};
