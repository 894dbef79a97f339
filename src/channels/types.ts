import type { Database } from '../db/database.js';
import type { Channel, StepKind } from '../domain/vocabulary.js';

export type { Channel, StepKind };

/** Which channel carries each step kind. */
export const CHANNEL_OF_STEP: Record<StepKind, Channel> = {
  connect: 'linkedin',
  message: 'linkedin',
  engage: 'linkedin',
  email: 'email',
  x_dm: 'x',
  x_engage: 'x',
  instagram_dm: 'instagram',
};

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
  kind: StepKind | 'reply';
  channel: Channel;
  recipient: Recipient;
  subject: string | null;
  text: string | null;
  actions: { type: string; count: number | null; reaction: string | null }[];
  idempotencyKey: string;
  at: Date;
  /** 0 for the first try of this step, 1 for the first retry, … */
  attempt?: number;
}

export type ActionResult =
  /** `sentFrom`: the mailbox that sent it (the pass summary counts sends per mailbox). */
  | { outcome: 'ok'; externalId: string | null; sentFrom?: string }
  /**
   * `waitSeconds`: the sending account cannot act now (disconnected, its login refused) through no fault of the lead:
   * the step is due again after this long and the answer does not count as one of the lead's attempts.
   */
  | { outcome: 'failed'; error: string; retryable: boolean; waitSeconds?: number }
  | { outcome: 'rate_limited'; retryAfterSeconds: number };

/** What the outside world did since the last poll, as a driver observed it. */
export type InboundObservation =
  | { type: 'invite_accepted'; leadId: string; at: Date }
  | { type: 'followed_back'; leadId: string; at: Date }
  | { type: 'reply'; leadId: string; channel: Channel; text: string | null; at: Date };

/** What a provider knows about an action it may have received before the engine crashed. */
export type DeliveryCheck = { status: 'sent'; externalId: string | null } | { status: 'not_sent' } | { status: 'unknown' };

/**
 * What a caller lends a driver for one call. `db` is the caller's open transaction: a driver that reads or writes
 * the database (the mailbox e-mail driver) uses it, so it never waits on locks its own caller holds (a reply
 * decision sends while its reply and lead rows are locked; PGlite has a single connection).
 */
export interface DriverContext {
  db?: Database;
}

export interface ChannelDriver {
  readonly channel: Channel;
  perform(action: OutboundAction, ctx?: DriverContext): Promise<ActionResult>;
  /**
   * Asks the provider, by idempotency key, whether `action` went out. Only drivers whose provider can answer
   * implement it; without it (or on `unknown`) a send interrupted by a crash is recorded as uncertain, never repeated.
   */
  confirm?(action: OutboundAction, ctx?: DriverContext): Promise<DeliveryCheck>;
  /** Observations due up to `now` for the given leads (sandbox: scripted; real: provider inbox). */
  observe?(input: { workspaceId: string; leads: Recipient[]; now: Date }): Promise<InboundObservation[]>;
}

export interface ChannelDrivers {
  forChannel(channel: Channel): ChannelDriver;
}
