import { simulatedThrough } from '../simulated.js';
import type { Database } from '../../db/database.js';
import { problemText, secondsUntil, XTransportError, type XApiSettings } from './api.js';
import { xAccountCaller, XCallFailed, type XAccountCall } from './account-client.js';
import { hasWrittenFirst, rememberDmSender, rememberLeadXUserId } from './watch.repository.js';
import { dmSendOf, dmWindow, markDmAnswered, markDmLeaving, X_DM_WINDOW_LIMIT } from './dm-sends.repository.js';
import { nextUtcDay, xAccountBudgetKey, type XBudget } from '../../domain/budgets.js';
import { releaseBudget, reserveBudget } from '../../domain/budgets.repository.js';
import type { XOauthRepository } from './oauth.repository.js';
import { XAccountDisconnectedError, type XTokensService } from './tokens.service.js';
import type { ActionResult, ChannelDriver, DeliveryCheck, DriverContext, OutboundAction } from '../types.js';

export interface XDriverDeps {
  db: Database;
  repo: XOauthRepository;
  tokens: XTokensService;
  settings: XApiSettings;
  /** Serves the X accounts that were never connected (no tokens on record): the sandbox. */
  fallback: ChannelDriver;
  /**
   * Daily caps per connected X account (UTC days, on the send budget ledger: domain/budgets.ts): DMs draw from the
   * message cap, follows from the invite cap (a follow is the X lane's invite), as OUTREACH_PACING_MESSAGE_CAP and
   * OUTREACH_PACING_INVITE_CAP say.
   */
  caps: { dmsPerDay: number; followsPerDay: number };
  /**
   * Whether the connected app's tier has the follow and like endpoints (OUTREACH_X_ENGAGE_API). Without them a follow
   * or like task is done by the person on X (`needs_person`, `x_engage_not_in_tier`); X removed them from the
   * self-serve tiers on 2026-04-20 (docs/policy.md).
   */
  engageApi?: boolean;
}

/** A disconnected account is not the lead's fault: its steps wait this long, then look again (readiness names it). */
const DISCONNECTED_WAIT_SECONDS = 1800;
/** How far back `confirm` reads the account's DM events for the one it may have sent before a crash. */
const CONFIRM_PAGES = 3;
/** A DM sent before the crash carries a created_at no earlier than this before the attempt's instant. */
const CONFIRM_SKEW_MS = 120_000;
/** A retry looks this far back for a DM an earlier try may have delivered. */
const RETRY_LOOKBACK_MS = 7 * 86_400_000;

/**
 * The same DM text as X stores it: X rewrites links to t.co and may trim whitespace, so links and spacing are
 * compared as placeholders.
 */
export function sameDmText(stored: string, sent: string): boolean {
  const norm = (s: string) =>
    s
      .replace(/https?:\/\/\S+/g, '<link>')
      .replace(/\s+/g, ' ')
      .trim();
  return norm(stored) === norm(sent);
}

type Call = XAccountCall;

/** `like`, `like_last_post`, `likes`…; `follow`, `follow_user`… (never `unfollow`). */
const isLike = (type: string) => /^like/.test(type);
const isFollow = (type: string) => /^follow/.test(type);

/**
 * The real X channel (docs/x-channel.md) for accounts connected with OAuth 2.0: `x_dm` (and a reply decision's
 * answer) through `POST /2/dm_conversations/with/{id}/messages`; `x_engage` as a follow (`POST /2/users/{me}/following`)
 * and/or likes of the person's latest posts (`GET /2/users/{id}/tweets`, `POST /2/users/{me}/likes`), as the step's
 * `actions` say (no actions: like the latest post). X's answers map onto driver results:
 * - 429 → `rate_limited` until `x-rate-limit-reset`, and the whole account pauses until then (every worker);
 * - 403 on a DM ("not permitted") → a final failure `x_dm_not_permitted`;
 * - 401 → one forced token refresh and a second try, then a final failure `x_unauthorized`;
 * - 5xx and timeouts → retryable.
 * An account never connected (no tokens) stays with the sandbox (`fallback`).
 */
export function createXDriver(deps: XDriverDeps): ChannelDriver {
  const { db, repo, tokens, settings, fallback } = deps;

  const callerFor = (q: Database, workspaceId: string, userId: string, at: Date): Call =>
    xAccountCaller({ repo, tokens, settings }, q, { workspaceId, userId, at });

  async function sendDm(call: Call, q: Database, me: string, action: OutboundAction): Promise<ActionResult> {
    const { text, at, attempt } = action;
    if (!text) return { outcome: 'failed', error: 'empty_message', retryable: false };
    const participant = await userIdOf(call, q, action);
    if (!participant) return { outcome: 'failed', error: 'x_user_not_found', retryable: false };
    // X allows automated DMs only after the person DMs the account first (docs/policy.md): a sequence's DM to
    // someone who never wrote is a person's task. A person's click (byPerson) and a reply decision are not automation.
    if (action.kind === 'x_dm' && !action.byPerson && !(await theyWroteFirst(call, q, action, me, participant)))
      return { outcome: 'needs_person', reason: 'x_dm_not_invited' };
    // A retry (an earlier try of this step may have reached X without an answer coming back): look before sending.
    if ((attempt ?? 0) > 0) {
      // A person's click shows them why X could not be asked (a 401, a 429); the engine's retry just tries later.
      const earlier = await findSentDm(call, me, participant, text, new Date(at.getTime() - RETRY_LOOKBACK_MS)).catch((err: unknown) => {
        if (action.byPerson) throw err;
        return null;
      });
      if (earlier?.status === 'sent') return { outcome: 'ok', externalId: earlier.externalId };
      if (earlier === null || earlier.status === 'unknown') return { outcome: 'failed', error: 'x_dm_unconfirmed', retryable: true };
    }
    // X's own limit on DM creation (docs/policy.md): 15 per 15 minutes per user. A DM past it waits for the window.
    const window = await dmWindow(q, { workspaceId: action.workspaceId, accountUserId: me, at });
    if (window.used >= X_DM_WINDOW_LIMIT) return { outcome: 'rate_limited', retryAfterSeconds: window.retryAfterSeconds };
    // Every read and check is behind us; the token is made fresh now (a refresh is a crash window too), so the mark
    // is the last thing before the request: a step whose key has no mark never reached X (`confirm`).
    await tokens.accessToken(action.workspaceId, me, q);
    const mark = { workspaceId: action.workspaceId, key: action.idempotencyKey };
    await markDmLeaving(q, { ...mark, accountUserId: me, at });
    let answer;
    try {
      answer = await call<{ data?: { dm_event_id?: string } }>('POST', `/2/dm_conversations/with/${encodeURIComponent(participant)}/messages`, {
        json: { text },
      });
    } catch (err) {
      // No answer (timeout, dropped connection, 5xx) is not "not sent": X may have taken it, or may still be taking
      // it. A DM already visible counts as sent; otherwise the step is retried, and the retry looks again first.
      if (!(err instanceof XCallFailed) || err.failure.outcome !== 'failed' || !err.failure.retryable) throw err;
      const check = await findSentDm(call, me, participant, text, at).catch(() => ({ status: 'unknown' as const }));
      if (check.status === 'sent') return { outcome: 'ok', externalId: check.externalId };
      return { outcome: 'failed', error: err.failure.error, retryable: true };
    }
    if (answer.status === 200 || answer.status === 201) {
      const dmEventId = answer.body?.data?.dm_event_id ?? null;
      // The DM left whatever becomes of the answer's mark: one that failed to write only makes a crash look X up.
      await markDmAnswered(q, { ...mark, dmEventId, at }).catch(() => undefined);
      return { outcome: 'ok', externalId: dmEventId };
    }
    // X refuses a DM to a person who does not accept DMs from this account: nothing the engine can change.
    if (answer.status === 403)
      return { outcome: 'failed', error: /not permitted/i.test(problemText(answer.body)) ? 'x_dm_not_permitted' : 'x_forbidden', retryable: false };
    return { outcome: 'failed', error: `x_${answer.status}`, retryable: false };
  }

  /**
   * Looks for a DM among the account's recent DM events (newest first): same conversation, same text, sent by the
   * account no earlier than shortly before `at`. `not_sent` once the listing goes back past `at` without it.
   */
  async function findSentDm(call: Call, me: string, participant: string, text: string, at: Date): Promise<DeliveryCheck> {
    const since = at.getTime() - CONFIRM_SKEW_MS;
    let token: string | undefined;
    for (let page = 0; page < CONFIRM_PAGES; page++) {
      const answer = await call<{ data?: DmEvent[]; meta?: { next_token?: string } }>('GET', '/2/dm_events', {
        query: { event_types: 'MessageCreate', max_results: 100, 'dm_event.fields': DM_FIELDS, pagination_token: token },
      });
      if (answer.status !== 200) return { status: 'unknown' };
      const events = answer.body?.data ?? [];
      const found = events.find(
        (e) =>
          e.sender_id === me &&
          (e.dm_conversation_id ?? '').split('-').includes(participant) &&
          !!e.created_at &&
          new Date(e.created_at).getTime() >= since &&
          sameDmText(e.text ?? '', text),
      );
      if (found) return { status: 'sent', externalId: found.id };
      const oldest = events[events.length - 1];
      if (!answer.body?.meta?.next_token || (oldest?.created_at && new Date(oldest.created_at).getTime() < since)) return { status: 'not_sent' };
      token = answer.body.meta.next_token;
    }
    return { status: 'unknown' };
  }

  /**
   * Whether the person has written to the account: recorded by the watcher (or an earlier look), else found in the
   * one-to-one conversation at X (`GET /2/dm_conversations/with/{id}/dm_events`), then recorded. Unknown (X does not
   * answer) is "no": a task is the safe side.
   */
  async function theyWroteFirst(call: Call, q: Database, action: OutboundAction, me: string, participant: string): Promise<boolean> {
    const key = { workspaceId: action.workspaceId, accountUserId: me, senderId: participant };
    if (await hasWrittenFirst(q, key)) return true;
    const answer = await call<{ data?: DmEvent[] }>('GET', `/2/dm_conversations/with/${encodeURIComponent(participant)}/dm_events`, {
      query: { event_types: 'MessageCreate', max_results: 100, 'dm_event.fields': DM_FIELDS },
    });
    if (answer.status !== 200) return false;
    const theirs = (answer.body?.data ?? []).filter((e) => e.sender_id === participant && e.created_at);
    if (theirs.length === 0) return false;
    const first = theirs.map((e) => new Date(e.created_at!)).reduce((a, b) => (a < b ? a : b));
    await rememberDmSender(q, { ...key, at: first });
    return true;
  }

  /** The person's X user id; a lead known only by username is resolved once and the id stored on the lead. */
  async function userIdOf(call: Call, q: Database, action: OutboundAction): Promise<string | null> {
    const { recipient } = action;
    if (recipient.xUserId) return recipient.xUserId;
    const handle = recipient.username?.replace(/^@/, '');
    if (!handle || !/^[A-Za-z0-9_]{1,15}$/.test(handle)) return null;
    const answer = await call<{ data?: { id?: string } }>('GET', `/2/users/by/username/${encodeURIComponent(handle)}`);
    const id = answer.status === 200 ? (answer.body?.data?.id ?? null) : null;
    if (id) await rememberLeadXUserId(q, { workspaceId: action.workspaceId, leadId: recipient.leadId, xUserId: id });
    return id;
  }

  async function engage(call: Call, q: Database, me: string, action: OutboundAction): Promise<ActionResult> {
    const target = await userIdOf(call, q, action);
    if (!target) return { outcome: 'failed', error: 'x_user_not_found', retryable: false };
    const types = action.actions.map((a) => (a?.type ?? '').toLowerCase());
    const follow = types.some(isFollow);
    const likes = types.some(isLike) || !follow ? Math.max(1, Math.min(5, action.actions.find((a) => isLike((a?.type ?? '').toLowerCase()))?.count ?? 1)) : 0;
    const done: string[] = [];
    if (follow) {
      const answer = await call('POST', `/2/users/${encodeURIComponent(me)}/following`, { json: { target_user_id: target } });
      if (answer.status !== 200) return { outcome: 'failed', error: answer.status === 403 ? 'x_follow_forbidden' : `x_${answer.status}`, retryable: false };
      done.push(`follow:${target}`);
    }
    if (likes > 0) {
      const timeline = await call<{ data?: { id: string }[] }>('GET', `/2/users/${encodeURIComponent(target)}/tweets`, { query: { max_results: 5 } });
      if (timeline.status !== 200) return { outcome: 'failed', error: `x_${timeline.status}`, retryable: false };
      // A person with no recent post has nothing to like: the step is done without a like (docs/x-channel.md).
      for (const post of (timeline.body?.data ?? []).slice(0, likes)) {
        const answer = await call('POST', `/2/users/${encodeURIComponent(me)}/likes`, { json: { tweet_id: post.id } });
        if (answer.status !== 200) return { outcome: 'failed', error: answer.status === 403 ? 'x_like_forbidden' : `x_${answer.status}`, retryable: false };
        done.push(`like:${post.id}`);
      }
    }
    return { outcome: 'ok', externalId: done.join(',') || null };
  }

  /**
   * Runs a DM or a follow that no claim reserved (a reply, a person's click on a task) within the account's daily
   * budget (UTC day): over it, it waits for the next day. The unit is given back when X did not act (a refusal or a
   * 429); an answer that never came keeps it (X may have acted). A sequence's DM holds its claim's unit instead,
   * given back by the engine the same way.
   */
  async function withDayUnit(q: Database, action: OutboundAction, budget: XBudget, send: () => Promise<ActionResult>): Promise<ActionResult> {
    const key = xAccountBudgetKey(action.workspaceId, action.accountUserId!, budget, action.at);
    const cap = budget === 'dms' ? deps.caps.dmsPerDay : deps.caps.followsPerDay;
    const untilNextDay = (): ActionResult => ({
      outcome: 'rate_limited',
      retryAfterSeconds: Math.max(60, Math.ceil((nextUtcDay(action.at).getTime() - action.at.getTime()) / 1000)),
    });
    if (!(await reserveBudget(q, { key, n: 1, cap, at: action.at }))) return untilNextDay();
    const result = await send().catch(async (err: unknown) => {
      await releaseBudget(q, key).catch(() => undefined);
      throw err;
    });
    const xDidNotAct =
      result.outcome === 'rate_limited' ||
      result.outcome === 'needs_person' ||
      (result.outcome === 'failed' && (!result.retryable || result.waitSeconds !== undefined));
    if (xDidNotAct) await releaseBudget(q, key);
    return result;
  }

  /** null: the account is not connected here (the sandbox serves it); otherwise a result that stops the call, or 'go'. */
  async function gate(q: Database, action: OutboundAction): Promise<ActionResult | 'go' | null> {
    if (!action.accountUserId) return null;
    const conn = await repo.connection(q, action.workspaceId, action.accountUserId);
    if (!conn) return null;
    if (conn.disconnected) return { outcome: 'failed', error: 'x_account_disconnected', retryable: true, waitSeconds: DISCONNECTED_WAIT_SECONDS };
    if (conn.rateLimitedUntil && conn.rateLimitedUntil > action.at)
      return { outcome: 'rate_limited', retryAfterSeconds: secondsUntil(conn.rateLimitedUntil, action.at) };
    return 'go';
  }

  async function run(action: OutboundAction, q: Database, body: (call: Call) => Promise<ActionResult>): Promise<ActionResult> {
    try {
      return await body(callerFor(q, action.workspaceId, action.accountUserId!, action.at));
    } catch (err) {
      if (err instanceof XCallFailed) {
        const f = err.failure;
        return f.outcome === 'rate_limited' ? { outcome: 'rate_limited', retryAfterSeconds: f.retryAfterSeconds } : f;
      }
      if (err instanceof XAccountDisconnectedError)
        return { outcome: 'failed', error: 'x_account_disconnected', retryable: true, waitSeconds: DISCONNECTED_WAIT_SECONDS };
      if (err instanceof XTransportError) return { outcome: 'failed', error: 'x_unreachable', retryable: true };
      // The token endpoint failing (5xx, timeout) is X's trouble of the moment: retried.
      if (err instanceof Error && err.message.startsWith('x_token_refresh_failed'))
        return { outcome: 'failed', error: 'x_token_refresh_failed', retryable: true };
      throw err;
    }
  }

  return {
    channel: 'x',

    async perform(action: OutboundAction, ctx?: DriverContext): Promise<ActionResult> {
      const q = ctx?.db ?? db;
      const gated = await gate(q, action);
      if (gated === null) return fallback.perform(action, ctx);
      if (gated !== 'go') return gated;
      const me = action.accountUserId!;
      const dm = () => run(action, q, (call) => sendDm(call, q, me, action));
      // A sequence's DM holds the unit its claim reserved (the descriptor's budgetsOf); a reply has no claim.
      if (action.kind === 'x_dm' || action.kind === 'reply') return ctx?.claim ? dm() : withDayUnit(q, action, 'dms', dm);
      if (action.kind === 'x_engage') {
        // Automated follows and any automated like are prohibited by X (docs/policy.md): only a person's click.
        if (!action.byPerson) return { outcome: 'needs_person', reason: 'x_engage_by_person' };
        // No follow or like endpoint on the app's tier: the person follows or likes on X and presses Done.
        if (!deps.engageApi) return { outcome: 'needs_person', reason: 'x_engage_not_in_tier' };
        const follows = action.actions.some((a) => isFollow((a?.type ?? '').toLowerCase()));
        const go = () => run(action, q, (call) => engage(call, q, me, action));
        return follows ? withDayUnit(q, action, 'follows', go) : go();
      }
      return { outcome: 'failed', error: `x_unsupported_step_${action.kind}`, retryable: false };
    },

    /**
     * After a crash (docs/x-channel.md, "Crash recovery"), a DM by its mark (x_dm_sends, written just before the POST):
     * - no mark: the request never left (the crash came during a read, a check, the token refresh or the day-unit
     *   reservation) → `not_sent` at once, X is not asked;
     * - a mark X answered → `sent`, with its dm_event_id;
     * - a mark without an answer: the DM may have reached X → looked for among the account's recent DM events (same
     *   conversation, same text, sent by the account no earlier than the first try of this key), which may say `unknown`.
     * A missing mark proves nothing when it was written inside a caller's transaction: a crash rolls it back with the
     * caller's work while the DM may have left. A reply decision (`reply`) performs and confirms inside its own
     * transaction (replies.decisions.ts), so for it, or whenever `confirm` is asked inside a transaction, no mark means
     * asking X, as before the marks. (Writing the mark on the pool instead is not an option: PGlite's single
     * connection would wait for ever on the caller's open transaction.)
     * Follows and likes are idempotent at X (following or liking again changes nothing), so an engage step that
     * cannot be confirmed is answered `not_sent` and redone.
     */
    async confirm(action: OutboundAction, ctx?: DriverContext): Promise<DeliveryCheck> {
      const q = ctx?.db ?? db;
      // Not gated by the account's 429 pause: asking X costs nothing but a read, and a paused account's engage is
      // simply done again once the pause is over.
      if (!action.accountUserId) return fallback.confirm ? fallback.confirm(action, ctx) : { status: 'unknown' };
      const conn = await repo.connection(q, action.workspaceId, action.accountUserId);
      if (!conn) return fallback.confirm ? fallback.confirm(action, ctx) : { status: 'unknown' };
      if (action.kind === 'x_engage') return { status: 'not_sent' };
      const mark = await dmSendOf(q, action.workspaceId, action.idempotencyKey);
      const markIsWitness = action.kind !== 'reply' && !q.isTransaction;
      if (!mark && markIsWitness) return { status: 'not_sent' };
      if (mark?.answeredAt) return { status: 'sent', externalId: mark.dmEventId };
      if (conn.disconnected) return { status: 'unknown' };
      const me = action.accountUserId;
      const participant = action.recipient.xUserId;
      if (!participant || !action.text) return { status: 'unknown' };
      // An earlier try of this key (a retry's mark keeps the first start) may be the one that reached X.
      const since = mark && mark.startedAt < action.at ? mark.startedAt : action.at;
      try {
        return await findSentDm(callerFor(q, action.workspaceId, me, action.at), me, participant, action.text, since);
      } catch {
        return { status: 'unknown' };
      }
    },

    /** A connected account's access token, refreshed now if it is about to expire (never inside the click's transaction). */
    async prepare({ workspaceId, accountUserId }): Promise<void> {
      const conn = await repo.connection(db, workspaceId, accountUserId);
      if (!conn || conn.disconnected) return;
      // A refusal or an unreachable X is answered by perform itself, as for any send.
      await tokens.accessToken(workspaceId, accountUserId).catch(() => undefined);
    },

    /** Leads of connected accounts are heard by the X watcher (DM events, followers); the rest by the sandbox. */
    ...simulatedThrough(fallback, async (input) => {
      const accountIds = [...new Set(input.leads.map((l) => l.xAccountUserId).filter((v): v is string => !!v))];
      const real = await repo.connectedUserIds(db, input.workspaceId, accountIds);
      return input.leads.filter((l) => !l.xAccountUserId || !real.has(l.xAccountUserId));
    }),
  };
}

export interface DmEvent {
  id: string;
  event_type?: string;
  text?: string;
  sender_id?: string;
  dm_conversation_id?: string;
  created_at?: string;
}
export const DM_FIELDS = 'id,text,sender_id,dm_conversation_id,created_at,event_type';
