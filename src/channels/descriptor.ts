import type { RawBuilder } from 'kysely';
import type { Config } from '../config/config.js';
import type { Database } from '../db/database.js';
import type { SequenceStepRow } from '../db/schema.js';
import type { AccountBudget, BudgetKey, BudgetWindow, Sender } from '../domain/budgets.js';
import type { TextCipher } from '../lib/crypto.js';
import type { WebhookEvent } from '../webhooks/outbox.js';
import type { Channel, StepKind } from '../domain/vocabulary.js';
import type { ProfileRefs } from '../domain/tasks.js';
import type { XDriverDeps } from './x/driver.js';
import type { ChannelDriver, InboundObservation, ObservedLead, Recipient } from './types.js';

export type { Channel, StepKind };
export type { Sender };

/** A step of a sequence, as stored (`sequences.steps`). */
export type Step = SequenceStepRow;

/**
 * What a process lends the channels to build their drivers. `mailboxes`, `x` and `linkedin` are the built-ins' real
 * connections: without them the built-in falls back to the sandbox (or SMTP_URL for e-mail), as before.
 */
export interface ChannelDeps {
  config: Config;
  db?: Database;
  cipher?: TextCipher;
  /** E-mail from each account's mailbox (and its INBOX watched). */
  mailboxes?: { db: Database; cipher: TextCipher };
  /** X through the X API v2 for every connected account. */
  x?: Omit<XDriverDeps, 'fallback' | 'caps'>;
  /** LinkedIn accounts set to tasks or linked to the LinkedIn gateway (docs/linkedin.md). */
  linkedin?: { db: Database };
}

/** The ledger `action` a step's attempt is written under, and the webhook event a sent step raises. */
export type StepEvent = { event: 'lead.invited' | 'lead.messaged' | 'lead.emailed'; channel?: string };

/** Where the claim's sender columns are, for a channel's SQL fragments (aliases of domain/claim-layout.ts). */
export interface SenderRefs {
  /** The lead's workspace id (`l.workspace_id`). */
  workspaceId: RawBuilder<string>;
  /** The messaging account's alias (`ma`); its columns may be NULL (no account). */
  account: string;
  /** The platform account user id the step goes through (X), NULL when none. */
  accountUserId: RawBuilder<string | null>;
}

/** What `resolveBudgets` reads with: the claim's transaction, the process's settings and the secrets' cipher. */
export interface BudgetDeps {
  db: Database;
  config: Config;
  cipher: TextCipher;
}

/** The send `resolveBudgets` is asked about. */
export interface BudgetAsk {
  workspaceId: string;
  leadId: string;
  /** The lead's messaging account, null without one. */
  accountId: string | null;
  /** The step kind, e.g. 'email'. */
  kind: string;
  recipient: Recipient;
  at: Date;
}

/** A budget a send draws, with its cap (null: counted, uncapped) and the start of its next window (when a full one has room). */
export interface ResolvedBudget {
  key: BudgetKey;
  cap: number | null;
  nextAt: Date;
}

/** A sender that is no messaging account (an X account user), and the budgets it holds (channels/descriptor.ts `platformSenders`). */
export interface PlatformSender {
  /** The platform's id of the account (X user id). */
  accountUserId: string;
  /** Its handle on the platform, without `@`. */
  handle: string;
  /** How its steps reach the platform (domain/policy.ts AccountDelivery: `x_connected` or `sandbox`). */
  delivery: string;
  budgets: BudgetKey[];
}

/** What one channel is, in one place: the engine and the modules know a channel only through this. */
export interface ChannelDescriptor {
  /** e.g. 'email'; a runtime channel picks its own, e.g. 'pigeon'. */
  readonly channel: string;
  /** The step kinds it carries, e.g. ['email']; a runtime one e.g. ['pigeon_dm']. */
  readonly stepKinds: readonly string[];
  /** Builds the channel's driver (perform/confirm/watch...) from the process's dependencies. */
  createDriver(deps: ChannelDeps): ChannelDriver;
  /** Inbound that the platform pushes (webhooks): verify the request, then hand each item to `apply` (the same path a poll uses). */
  push?: PushInbound;
  /**
   * The ledger `action` (spec activity enum) one attempt of `step` is written under; `alreadyMessaged`: the lead has
   * had a message already (a message step is then a `followup`).
   */
  actionOf(step: Step, alreadyMessaged?: boolean): string;
  /** The webhook event a sent step raises (null: none); `channel` is set when the event names its channel. */
  eventOf(step: Step): StepEvent | null;
  /** Budgets a step of this channel draws from its sender at `at` (domain/budgets.ts BudgetKey, windows from BUDGET_WINDOWS). */
  budgetsOf?(step: Step, sender: Sender, at: Date): BudgetKey[];
  /**
   * The budgets of a step's sender that only the database can name, resolved in the claim's transaction and reserved
   * there with `budgetsOf`'s (e-mail: the mailbox the lead is sent from, its account's, the sticky one or the pool's
   * pick made sticky now, and that mailbox's day to the recipient's domain). Each comes with its cap and when a full
   * one has room again, per ask in the caller's order. `deps.db` is the claim's transaction; `asks` are the batch's
   * sends of this channel.
   */
  resolveBudgets?(deps: BudgetDeps, asks: BudgetAsk[]): Promise<ResolvedBudget[][]>;
  /**
   * The windows of the channel's own budgets (scope `channel`, domain/budgets.ts `channelBudgetKey`), by budget name:
   * the one place they are decided for it, as BUDGET_WINDOWS is for the built-in scopes.
   */
  readonly budgetWindows?: Readonly<Record<string, BudgetWindow>>;
  /** The cap of one of the keys `budgetsOf` names, from the process's settings (null or absent: counted, uncapped). */
  budgetCap?(key: BudgetKey, config: Config): number | null;
  /**
   * Every budget of this channel's own a messaging account holds beyond its pacing, as GET /progress lists them
   * (LinkedIn: a gateway account's week of invitations and day of messages); `sender.delivery` is this channel's
   * (`deliverySql` over the account). Absent: none.
   */
  accountBudgets?(sender: Sender, at: Date): BudgetKey[];
  /**
   * The senders of this channel that are no messaging account, with the budgets each holds at `at`, as GET /progress
   * lists them (`platformAccounts`; X: every X account of the workspace, its DMs and follows today when connected).
   * Absent: every sender of the channel is a messaging account.
   */
  platformSenders?(db: Database, workspaceId: string, at: Date): Promise<PlatformSender[]>;
  /** What a lead must have for a step of this channel to go out, else the skip reason (e.g. email: 'missing_email'). */
  missingAddress?(recipient: Recipient): string | null;
  labels: {
    name: string;
    /** The field of the pass summary's wire form (POST /admin/v1/engine/tick, the worker's log) its per-account counts go under. */
    summaryKey?: string;
  };

  /**
   * What a step goes out through: `account`, the lead's messaging account (default); `account_user`, the platform
   * account the lead or its Play is reached from (X), with no messaging account on its ledger rows.
   */
  readonly sendsFrom?: 'account' | 'account_user';
  /** The step kinds of this channel that deliver text to the person (default: domain/vocabulary.ts MESSAGE_KINDS). */
  readonly messageKinds?: readonly string[];
  /** The messaging account budget (engine/pacing.ts, reserved at claim) a step draws; null or absent: unpaced. */
  accountBudgetOf?(step: Step): AccountBudget | null;
  /** The step carries a subject line (rendered from the step's `subject`). */
  readonly subject?: boolean;
  /**
   * The step is this channel's invitation (LinkedIn connect, X follow): the lead moves to `invited`, the lead column
   * `invitedColumn` is stamped, and the engine starts watching for the answer.
   */
  invites?(step: Step): boolean;
  /** The lead column an invitation stamps (and that says the channel has reached the person). */
  readonly invitedColumn?: 'invited_at' | 'followed_at';
  /** The observations this channel's people make of an invitation (`invite_accepted`, `followed_back`). */
  readonly hears?: readonly Extract<InboundObservation['type'], 'invite_accepted' | 'followed_back'>[];
  /** One account's counts in the pass summary before anything is counted (e-mail: every count of a mailbox at 0). */
  emptyCounts?(): Record<string, unknown>;
  /**
   * What a person's answer to this channel's invitation (one of `hears`) records: the ledger action, and the webhook
   * event with its data (`eventData`; absent: `{ lead }`, the lead as events show it).
   */
  readonly answered?: {
    action: 'accepted' | 'x_follow_back';
    event: WebhookEvent;
    eventData?: (lead: ObservedLead) => Record<string, unknown>;
  };
  /**
   * A due step waits for an invitation's acceptance instead of going out (LinkedIn: a message after an invite not
   * yet accepted, unless the account is set to tasks and has no watcher to hear it).
   */
  waitsForAcceptance?(step: Step, lead: { invited_at: Date | null; connected_at: Date | null }, delivery: string): boolean;
  /** SQL for the sender's delivery (domain/policy.ts AccountDelivery) in the claim; absent: 'sandbox'. */
  deliverySql?(refs: SenderRefs): RawBuilder<string>;
  /** Whether the sandbox may invent what a person did for a lead whose messaging account has `accountDelivery`. */
  simulatesObservations?(accountDelivery: string | null): boolean;
  /**
   * A person's click in the console performs this channel's task through its driver, as the account's person (X: the
   * API sends the DM or follows at the click); absent: the person does it on the platform and presses Done.
   */
  readonly performedByClick?: boolean;
  /**
   * An uncertain send of this channel may go again at a person's word (Send anyway), under a fresh key (e-mail: a
   * fresh Message-ID); absent: only Mark as sent or Leave it.
   */
  readonly resendsUncertain?: boolean;
  /** Replies on this channel are answered on the platform itself: no draft, and `reply.received` names the channel. */
  readonly answersOnPlatform?: boolean;
  /** Where the person is found on this channel (X, Instagram: their profile); absent: the LinkedIn profile (domain/tasks.ts profileUrlOf). */
  readonly profileUrl?: (lead: ProfileRefs) => string | null;
  /**
   * Where a person answers a reply of a channel that `answersOnPlatform` (X: the DM conversation, else the person's
   * profile), from the person's and the account's platform ids; null when the row knows neither.
   */
  conversationUrl?(ids: { personId: string | null; accountUserId: string | null; username: string | null }): string | null;
  /**
   * Inside the reply's transaction, after a leaver notice stopped the lane (e-mail: the address it came to is
   * suppressed).
   */
  onLeaver?(trx: Database, lead: ObservedLead, obs: Extract<InboundObservation, { type: 'reply' }>): Promise<void>;
}

export interface PushInbound {
  /**
   * Checks the request is the platform's (a signature over the raw body with a per-channel secret), bounded in size.
   * Returns the observations it carries, each tied to a lead of `workspaceId` (InboundObservation from channels/types.ts),
   * or null when the signature does not verify (the route answers 401 and changes nothing).
   */
  verify(input: {
    workspaceId: string;
    headers: Record<string, string | string[] | undefined>;
    rawBody: Buffer;
    db: Database;
  }): Promise<InboundObservation[] | null>;
}

/** The registry: the built-in descriptors plus any registered at run time (a test's fifth channel). */
export interface ChannelRegistry {
  all(): readonly ChannelDescriptor[];
  ofChannel(channel: string): ChannelDescriptor | undefined;
  ofStepKind(kind: string): ChannelDescriptor | undefined;
}

/**
 * A registry over `descriptors`: a later descriptor of the same channel replaces an earlier one, and a step kind
 * belongs to the last descriptor that names it. Throws on a descriptor without a channel name.
 */
export function registryOf(descriptors: readonly ChannelDescriptor[]): ChannelRegistry {
  const byChannel = new Map<string, ChannelDescriptor>();
  for (const d of descriptors) {
    if (!d.channel) throw new Error('a channel descriptor needs a channel name');
    byChannel.set(d.channel, d);
  }
  const all = [...byChannel.values()];
  const byKind = new Map<string, ChannelDescriptor>();
  for (const d of all) for (const k of d.stepKinds) byKind.set(k, d);
  return {
    all: () => all,
    ofChannel: (channel) => byChannel.get(channel),
    ofStepKind: (kind) => byKind.get(kind),
  };
}
