/**
 * The part of the engine's pacing read (src/engine/pacing.ts, createPacingReader; exposed by the engine in
 * the services bag) that GET /progress reports. Taking it as a dependency keeps /progress reporting exactly
 * the counters and caps the engine reserves against, instead of a second estimate that could disagree.
 */
export interface PacingFigures {
  pacingTimeZone: string;
  invitesSentToday: number;
  inviteCapToday: number;
  rampPhase: number;
  /** The account's rows of the send budget ledger today (src/domain/budgets.ts), with the cap that holds each. */
  budgets: BudgetFigures[];
}

/** One budget of an account or of one of its mailboxes, as the engine counts and caps it. */
export interface BudgetFigures {
  scope: string;
  scopeId: string;
  budget: string;
  window: string;
  windowStart: string;
  used: number;
  cap: number | null;
}

/** A sender that is no messaging account (an X account) and its budgets today, as the engine counts and caps them. */
export interface PlatformAccountFigures {
  channel: string;
  accountUserId: string;
  handle: string;
  delivery: string;
  budgets: BudgetFigures[];
}

export interface PacingSource {
  workspacePacing(workspaceId: string, now: Date): Promise<Map<string, PacingFigures>>;
  platformAccounts(workspaceId: string, now: Date): Promise<PlatformAccountFigures[]>;
}
