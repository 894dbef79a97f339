import type { ReplyVerdict } from '../domain/classify.js';
import type { Database } from '../db/database.js';
import type { Channel, StepKind } from '../domain/vocabulary.js';

export type { Channel, StepKind };

/** Which channel carries each step kind (its one home: domain/vocabulary.ts). */
export { CHANNEL_OF_STEP } from '../domain/vocabulary.js';

export interface Recipient {
  leadId: string;
  person: string | null;
  email: string | null;
  linkedinUrl: string | null;
  xUserId: string | null;
  username: string | null;
  /** The X account that reaches this person (the lead's own, or its Play's); null when none. */
  xAccountUserId?: string | null;
  /** The world file's per-lead script for the sandbox drivers; real drivers ignore it. */
  sandbox: Record<string, unknown> | null;
  /**
   * What the engine has recorded about this person so far. Optional so real drivers may ignore it; the
   * sandbox derives its (stateless, deterministic) observations from it.
   */
  history?: RecipientHistory;
}

export interface RecipientHistory {
  invitedAt: Date | null;
  connectedAt: Date | null;
  messagedAt: Date | null;
  /** Channel of the last message-like step that went out (message, email, x_dm, instagram_dm). */
  lastMessageChannel: Channel | null;
  followedAt: Date | null;
  followedBackAt: Date | null;
  repliedAt: Date | null;
}

/** One outward action. `idempotencyKey` is stable per lead+step (or per reply decision) so a driver can refuse a repeat. */
export interface OutboundAction {
  workspaceId: string;
  accountId: string | null;
  accountUserId: string | null;
  /** A step kind (the spec's, or a runtime channel's), or `reply` for a reply decision's answer. */
  kind: StepKind | 'reply' | (string & {});
  channel: Channel | (string & {});
  recipient: Recipient;
  subject: string | null;
  text: string | null;
  actions: { type: string; count: number | null; reaction: string | null }[];
  idempotencyKey: string;
  at: Date;
  /** 0 for the first try of this step, 1 for the first retry, … */
  attempt?: number;
  /**
   * Set by the platform policy (domain/policy.ts) when the engine may act only if the person wrote to the account
   * first (an X DM): the driver looks (stored senders, then the platform) and answers `needs_person` when they did not.
   */
  onlyIfTheyWroteFirst?: boolean;
  /** A signed-in person performs this at a click (a task in the console): the policy has already been answered. */
  byPerson?: boolean;
  /**
   * A calendar invitation to send with the text (a reply decision `invite` with a time; docs/meetings.md
   * "Invitations"): `id` is a UUID of this invitation alone. A channel that can carry one writes it under an iCalendar
   * UID made of it (e-mail: `<id>@<mailbox domain>`, an RFC 5546 `METHOD:REQUEST`) and answers that UID
   * (`invitationUid`); a channel that cannot ignores it and answers none.
   */
  invitation?: CalendarInvitation;
}

/** A meeting proposed to the recipient (OutboundAction.invitation): when, how long (`endsAt`), and its title. */
export interface CalendarInvitation {
  id: string;
  startsAt: Date;
  endsAt: Date;
  summary: string;
}

export type ActionResult =
  /** `sentFrom`: the mailbox that sent it (the pass summary counts sends per mailbox). */
  /** `invitationUid`: the iCalendar UID the action's invitation went out under (absent: none went). */
  /** `noteOmitted`: it went without its note, and why (a LinkedIn invitation past the notes a month: `linkedin_note_limit`). */
  | { outcome: 'ok'; externalId: string | null; sentFrom?: string; invitationUid?: string; noteOmitted?: string }
  /**
   * `waitSeconds`: the sending account cannot act now (disconnected, its login refused) through no fault of the lead:
   * the step is due again after this long and the answer does not count as one of the lead's attempts.
   */
  | { outcome: 'failed'; error: string; retryable: boolean; waitSeconds?: number }
  | { outcome: 'rate_limited'; retryAfterSeconds: number }
  /**
   * The platform's rules keep this from automation (domain/policy.ts): nothing was sent, and a person must do it.
   * The engine turns it into a task (docs/tasks.md). `reason` is one of the policy's PERSON_REASONS.
   */
  | { outcome: 'needs_person'; reason: string }
  /**
   * The provider may or may not have it (e-mail: the connection was lost inside the SMTP transaction, before any
   * answer). Never repeated: recorded as an uncertain send, as after a crash, and a person decides (docs/tasks.md).
   */
  | { outcome: 'uncertain'; error: 'uncertain_delivery' };

/** What the outside world did since the last poll, as a driver observed it. */
export type InboundObservation =
  | { type: 'invite_accepted'; leadId: string; at: Date }
  | { type: 'followed_back'; leadId: string; at: Date }
  | {
      type: 'reply';
      leadId: string;
      channel: Channel;
      text: string | null;
      at: Date;
      /**
       * Set by the inbox watcher (real e-mail): whether the reply is threaded to a message we sent to its sender's
       * address (In-Reply-To or References name our Message-ID, and From is the address we wrote to). An e-mail that
       * asks to stop opts the person out only when true (docs/opt-out.md). Unset (X DMs, the sandbox): always believed.
       */
      tiedToOurMessage?: boolean;
      /** E-mail: the address our message went to (a leaver notice suppresses it) and our Message-ID it answers. */
      address?: string | null;
      ourMessageId?: string | null;
    };

/** What a provider knows about an action it may have received before the engine crashed. */
export type DeliveryCheck = { status: 'sent'; externalId: string | null; invitationUid?: string } | { status: 'not_sent' } | { status: 'unknown' };

/**
 * What a caller lends a driver for one call. `db` is the caller's open transaction: a driver that reads or writes
 * the database (the mailbox e-mail driver) uses it, so it never waits on locks its own caller holds (a reply
 * decision sends while its reply and lead rows are locked; PGlite has a single connection).
 */
export interface DriverContext {
  db?: Database;
  /**
   * The engine's claim this send is made under: the lead (`action.recipient.leadId`) marked in flight with
   * `action.idempotencyKey` at `at` (src/engine/claim.ts). A driver whose send has a point of no return (the e-mail
   * driver's start record, just before the text goes) checks there that the lead still holds it: a worker that was
   * only slow, whose lease another worker took over, then stops instead of sending a second time. Absent for a
   * person's send (Send anyway, a reply decision), which holds no claim.
   */
  claim?: { at: Date };
}

/** What recording an observation needs to know about its lead. */
export interface ObservedLead {
  id: string;
  workspace_id: string;
  account_id: string | null;
  x_account_user_id: string | null;
  x_user_id: string | null;
  username: string | null;
}

/**
 * What the engine recorded for one observation; null when the lead was already past it. `stopped`: a leaver notice
 * ended the lane for good.
 */
export type ObservationResult = 'observed' | 'snoozed' | 'replied' | 'stopped' | null;

/**
 * The engine's one path for what a watcher heard (engine/observe.ts), lent to the watchers: inside the caller's
 * transaction it records an acceptance, a follow-back or a reply (freezes the lead, queues the reply, sends
 * `reply.received`). `verdict` is the reply's classification when the watcher made it already (each message is
 * classified once, with what only the watcher knows: an auto-reply's headers, the subject); otherwise the engine
 * classifies the text (domain/classify.ts).
 */
export type ApplyObservation = (
  trx: Database,
  obs: InboundObservation,
  lead: ObservedLead,
  now: Date,
  summary: PassSummary,
  verdict?: ReplyVerdict,
) => Promise<ObservationResult>;

/**
 * An answer to one of our calendar invitations as a watcher read it (an e-mail's iTIP `METHOD:REPLY`, RFC 5546): the
 * iCalendar UID it names, and each attendee it carries with the PARTSTAT it gives (lower case).
 */
export interface InvitationAnswer {
  workspaceId: string;
  uid: string;
  attendees: { address: string; response: 'accepted' | 'declined' | 'tentative' }[];
  at: Date;
}

/**
 * Applies an invitation's answer inside the caller's transaction (modules/meetings, lent by the app through the
 * engine): `applied` when it answered an invitation of ours, `unchanged` when that answer was already on record,
 * `unknown` when it names no invitation we sent to that attendee (nothing is written).
 */
export type ApplyInvitationAnswer = (trx: Database, answer: InvitationAnswer, now: Date) => Promise<'applied' | 'unchanged' | 'unknown'>;

/** What a watch pass is lent: the time of the pass, its summary, and the engine's observation path. */
export interface WatchContext {
  now: Date;
  /**
   * An account whose next poll falls on or before this time is due (absent: `now`). A loop's pass looks half its
   * interval ahead, so an account due a moment after the pass is polled now rather than a whole interval late.
   */
  dueBy?: Date;
  /** Called after each account polled: the watch loop's heartbeat (engine/heartbeat.ts). */
  progress?: () => void;
  summary: PassSummary;
  apply: ApplyObservation;
  /** Where an answer to our calendar invitation goes; absent, such an answer is ignored. */
  answerInvitation?: ApplyInvitationAnswer;
}

/** What one pass did with one mailbox's INBOX (the engine's pass summary carries one per mailbox polled). */
export interface MailboxPassCounts {
  /** E-mails this mailbox sent in the pass (the engine's step sends). */
  sent: number;
  replies: number;
  outOfOffice: number;
  bounces: number;
  /** 4.x.x delivery reports: noted on the lead's ledger, nothing stops. */
  delayed: number;
  unsubscribes: number;
  /** Abuse complaints (ARF, JMRP) tied to our messages (docs/deliverability.md); present once there is one. */
  complaints?: number;
  /** Leaver notices ("no longer with the company"): lanes stopped for good; present once there is one. */
  leavers?: number;
  /** Answers to our calendar invitations (iTIP REPLY) applied; present once there is one. */
  meetingResponses?: number;
  /** Mail not tied to a lead, or not believed (an unthreaded auto-reply, a DMARC failure): counted, nothing applied. */
  unmatched: number;
  /** Messages that could not be read (mailparser refused them, the server would not fetch them): passed over. */
  unparseable: number;
  /** Set when the mailbox could not be read this pass: `mailbox_auth_failed` or `mailbox_unreachable`. */
  error?: 'mailbox_auth_failed' | 'mailbox_unreachable' | 'mailbox_unreadable';
}

export const emptyMailboxCounts = (): MailboxPassCounts => ({
  sent: 0,
  replies: 0,
  outOfOffice: 0,
  bounces: 0,
  delayed: 0,
  unsubscribes: 0,
  unmatched: 0,
  unparseable: 0,
});

/** What one pass heard on one connected X account (the engine's pass summary carries one per account polled). */
export interface XAccountPassCounts {
  replies: number;
  followBacks: number;
  /** DMs from people who are not leads this account reached: counted, not stored. */
  unmatched: number;
  /** More new DM events than one poll reads (1,000): the oldest of them were skipped. */
  truncated?: true;
  /** Set when the account could not be read this pass. */
  error?: 'x_account_disconnected' | 'x_rate_limited' | 'x_unreachable' | 'x_unauthorized';
}

export const emptyXCounts = (): XAccountPassCounts => ({ replies: 0, followBacks: 0, unmatched: 0 });

/** What one pass heard on one LinkedIn gateway account (docs/linkedin.md), keyed by messaging account id. */
export interface LinkedinAccountPassCounts {
  replies: number;
  acceptances: number;
  /** Chats with people who are not leads of this account: counted, not read. */
  unmatched: number;
  /** Items that could not be applied (passed over, the rest of the poll went on). */
  unreadable: number;
  /** Set when the account could not be read this pass. */
  error?: 'linkedin_gateway_auth_failed' | 'linkedin_gateway_rate_limited' | 'linkedin_gateway_unreachable';
}

/** What one engine pass did, inside the engine; `passReport` (engine/index.ts) is its form on the wire. */
export interface PassSummary {
  /** Steps that went out (outcome ok). */
  actions: number;
  skipped: number;
  failed: number;
  repliesDetected: number;
  /** Steps that were due but wait for pacing, sending hours or energy. */
  deferred: number;
  /** Acceptances and follow-backs recorded. */
  observations: number;
  /** New candidates saved by Play discovery. */
  discovered: number;
  /** Steps the platform policy gave to a person as tasks this pass (docs/tasks.md); absent when none. */
  tasksOpened?: number;
  /** Leads that took an edge of a branching step this pass (docs/sequences-and-leads.md "Branches"); absent when none. */
  branched?: number;
  /**
   * Per channel, per account polled or sent from this pass: the channel's counts (e-mail: MailboxPassCounts per
   * mailbox; X: XAccountPassCounts per X user id; LinkedIn: LinkedinAccountPassCounts per messaging account id). A
   * channel is present once one of its accounts has counts.
   */
  channels: Record<string, Record<string, object>>;
}

/**
 * What one engine pass did, as POST /admin/v1/engine/tick answers it and the worker logs it: the pass's counters,
 * and each channel's per-account counts under the field its descriptor names (`labels.summaryKey`).
 */
export type PassReport = Omit<PassSummary, 'channels'> & {
  /** Per mailbox polled this pass (inbox watcher): replies, out-of-office, bounces, unsubscribes, unmatched mail. */
  mailboxes?: Record<string, MailboxPassCounts>;
  /** Per connected X account polled this pass (X watcher): DM replies, follow-backs, unmatched DMs. */
  xAccounts?: Record<string, XAccountPassCounts>;
  /** Per LinkedIn gateway account polled this pass (LinkedIn watcher): replies, acceptances, unmatched chats. */
  linkedinAccounts?: Record<string, LinkedinAccountPassCounts>;
};

export const emptySummary = (): PassSummary => ({
  actions: 0,
  skipped: 0,
  failed: 0,
  repliesDetected: 0,
  deferred: 0,
  observations: 0,
  discovered: 0,
  channels: {},
});

/**
 * A channel: how it acts (perform), how it learns whether an interrupted action went out (confirm), and how it
 * hears back (observe for the sandbox's scripted observations; watch for a real provider's inbox, through the
 * shared loop in channels/watch-loop.ts).
 */
export interface ChannelDriver {
  /** The channel it serves (a built-in's Channel, or a channel registered at run time). */
  readonly channel: string;
  perform(action: OutboundAction, ctx?: DriverContext): Promise<ActionResult>;
  /**
   * Asks the provider, by idempotency key, whether `action` went out. Only drivers whose provider can answer
   * implement it; without it (or on `unknown`) a send interrupted by a crash is recorded as uncertain, never repeated.
   */
  confirm?(action: OutboundAction, ctx?: DriverContext): Promise<DeliveryCheck>;
  /**
   * A person says an interrupted send whose delivery stayed uncertain did reach its recipient ("Mark as sent",
   * docs/tasks.md): the channel treats it as sent from now on (e-mail: later steps thread on its Message-ID).
   * `idempotencyKey` is the interrupted step's key. Resolves quietly when the channel holds no record of it.
   */
  acknowledge?(input: { workspaceId: string; idempotencyKey: string }, ctx?: DriverContext): Promise<void>;
  /** Observations due up to `now` for the given leads (sandbox: scripted; real: provider inbox). */
  observe?(input: { workspaceId: string; leads: Recipient[]; now: Date }): Promise<InboundObservation[]>;
  /**
   * For the given leads this driver simulates (the sandbox's scripted people): when it next has something to report
   * after `now`, as far as the history passed in decides (null: nothing until the engine reaches the person again). A
   * lead absent from the answer is one it cannot tell (a real provider's): watched at the engine's interval.
   */
  nextObservations?(input: { workspaceId: string; leads: Recipient[]; now: Date }): Promise<Map<string, Date | null>>;
  /** Reads the provider's inbox of every account due (replies, bounces, follow-backs) and hands each to `ctx.apply`. */
  watch?(ctx: WatchContext): Promise<void>;
  /**
   * Hears the provider push what arrived (IMAP IDLE), beside the watch loop, until stopped; the watch loop then polls
   * the accounts held only as a slow reconciliation. Absent: the channel is polled only.
   */
  listen?(ctx: ListenContext): Listening;
  /**
   * Before a person's click performs inside a transaction (a task): what must commit on its own first. X: an expiring
   * access token is refreshed now, since X rotates refresh tokens (a rolled-back refresh would lose the new one) and
   * PGlite's one connection cannot run the refresh's own transaction beside the caller's.
   */
  prepare?(account: { workspaceId: string; accountUserId: string }): Promise<void>;
}

/** What a push listener (IMAP IDLE: channels/email/inbox/idle.ts) needs from the engine. */
export interface ListenContext {
  /** A fresh watch context for one read as of `now` (a summary of its own). */
  context(now: Date): WatchContext;
  log: { warn(obj: unknown, msg: string): void };
  /** Called after each renewal of the listener's shard: its heartbeat. */
  progress?: () => void;
}

/** A running listener: the accounts it holds a live connection for, and its stop (lets go of them at once). */
export interface Listening {
  held(): string[];
  stop(): Promise<void>;
}

export interface ChannelDrivers {
  /** The driver of `channel`; throws for a channel with none. */
  forChannel(channel: string): ChannelDriver;
  /** Every driver that watches an inbox, in the order a pass reads them (test doubles may have none). */
  watchers?(): ChannelDriver[];
}
