import { simulatedThrough } from '../simulated.js';
import type { Config } from '../../config/config.js';
import type { Database } from '../../db/database.js';
import { gatewayBudgetKey, nextUtcDay } from '../../domain/budgets.js';
import { releaseBudget, reserveBudget } from '../../domain/budgets.repository.js';
import { addLocalDays, safeZone, zonedTime } from '../../domain/time.js';
import { gatewayTime, publicIdentifierOf, refusalCode } from './api.js';
import { enc, GatewayCallFailed, gatewayCaller, gatewaySettingsOf, type GatewayCall } from './client.js';
import * as repo from './accounts.repository.js';
import type { ActionResult, ChannelDriver, DeliveryCheck, DriverContext, OutboundAction } from '../types.js';

export interface LinkedinDriverDeps {
  db: Database;
  config: Pick<Config, 'linkedin'>;
  /** Serves `sandbox` accounts (and actions with no account): the simulated LinkedIn, unchanged. */
  fallback: ChannelDriver;
}

/** A refused account (401/403) is not the lead's fault: its steps wait this long, then look again (readiness names it). */
export const AUTH_FAILED_WAIT_SECONDS = 1800;
/** The gateway down (5xx, timeout): the step waits this long, not counted as one of the lead's attempts. */
export const UNAVAILABLE_WAIT_SECONDS = 300;
export const AUTH_FAILED = 'linkedin_gateway_auth_failed';
/** Unipile's "Send an invitation": the note is at most 300 characters. */
export const INVITE_NOTE_MAX = 300;
/** An invitation sent without its note: the account's notes of the last 30 days are used up (docs/policy.md). */
export const NOTE_LIMIT = 'linkedin_note_limit';
/** A retry (or confirm) reads this many of the chat's latest messages for the one an earlier try may have sent. */
const CONFIRM_MESSAGES = 50;
const CONFIRM_SKEW_MS = 120_000;
const RETRY_LOOKBACK_MS = 7 * 86_400_000;

export interface GatewayMessage {
  id?: string;
  chat_id?: string;
  sender_id?: string;
  text?: string | null;
  timestamp?: string;
  is_sender?: 0 | 1 | boolean;
}

const sameText = (a: string, b: string) => a.replace(/\s+/g, ' ').trim() === b.replace(/\s+/g, ' ').trim();

/** The next local midnight of the account: a week's invitation window moves on by one day then. */
function nextLocalDay(at: Date, timeZone: string): Date {
  const d = addLocalDays(at, timeZone, 1);
  return zonedTime(d.year, d.month, d.day, 0, timeZone);
}

/**
 * The LinkedIn channel (docs/linkedin.md). Each lead's messaging account says how its actions reach LinkedIn:
 * - `sandbox`: the simulated LinkedIn (`fallback`), unchanged;
 * - `tasks`: nothing is automated: `needs_person` (the engine and reply decisions make tasks before asking here);
 * - `gateway`: through Unipile API v1 — `connect` as `POST /api/v1/users/invite`, `message` and a reply decision's
 *   answer in the lead's chat (`POST /api/v1/chats/{chat_id}/messages`) or a new one (`POST /api/v1/chats`); `engage`
 *   stays a person's (`needs_person`). The person's LinkedIn id comes from `GET /api/v1/users/{public identifier}`
 *   once and is kept on the lead, as is the chat.
 * 429 and 5xx wait (never one of the lead's attempts); 401/403 stop the account (`linkedin_gateway_auth_failed`).
 * Caps stricter than LinkedIn's, on the send budget ledger: invitations per rolling week, messages per day.
 */
export function createLinkedinDriver(deps: LinkedinDriverDeps): ChannelDriver {
  const { db, fallback } = deps;
  const caps = deps.config.linkedin;
  const settings = gatewaySettingsOf(deps.config.linkedin);
  const call: GatewayCall | null = settings ? gatewayCaller(settings) : null;

  /** LinkedIn's id of the person: kept on the lead, else looked up by the public identifier of its profile URL. */
  async function providerIdOf(q: Database, gw: GatewayCall, acc: repo.LinkedinAccountRow, action: OutboundAction, known: string | null) {
    if (known) return { providerId: known };
    const identifier = publicIdentifierOf(action.recipient.linkedinUrl);
    if (!identifier) return { failure: { outcome: 'failed', error: 'linkedin_profile_url_unusable', retryable: false } as ActionResult };
    const answer = await gw<{ provider_id?: string }>('GET', `/api/v1/users/${enc(identifier)}`, { query: { account_id: acc.gatewayAccountId! } });
    const providerId = answer.status === 200 ? answer.body?.provider_id : undefined;
    if (!providerId) {
      const error = answer.status === 404 ? 'linkedin_user_not_found' : refusalCode(answer.status, answer.body);
      return { failure: { outcome: 'failed', error, retryable: false } as ActionResult };
    }
    await repo.rememberLeadIds(q, { workspaceId: action.workspaceId, leadId: action.recipient.leadId, providerId });
    return { providerId };
  }

  /**
   * An invitation, with its note while the account has notes left: LinkedIn gives free members a note on 5
   * invitations a month (OUTREACH_LINKEDIN_NOTES_PER_MONTH, counted over 30 local days). Past it the invitation goes
   * without the note, as LinkedIn itself would let a free member send it, and says so (`noteOmitted`). A note's unit is
   * given back when the invitation did not go.
   */
  async function invite(q: Database, gw: GatewayCall, acc: repo.LinkedinAccountRow, action: OutboundAction): Promise<ActionResult> {
    const written = action.text?.trim() ?? '';
    if (written.length > INVITE_NOTE_MAX) return { outcome: 'failed', error: 'linkedin_invite_note_too_long', retryable: false };
    const ids = await repo.leadLinkedinIds(q, action.workspaceId, action.recipient.leadId);
    const who = await providerIdOf(q, gw, acc, action, ids.providerId);
    if (who.failure) return who.failure;
    const noteKey = written ? gatewayBudgetKey(action.workspaceId, acc.id, 'notes', action.at, safeZone(acc.timeZone)) : null;
    const withNote = noteKey ? await reserveBudget(q, { key: noteKey, n: 1, cap: caps.notesPerMonth, at: action.at }) : false;
    const note = withNote ? written : '';
    let result: ActionResult;
    try {
      const answer = await gw<{ invitation_id?: string }>('POST', '/api/v1/users/invite', {
        json: { provider_id: who.providerId, account_id: acc.gatewayAccountId, ...(note && { message: note }) },
      });
      result =
        answer.status === 200 || answer.status === 201
          ? { outcome: 'ok', externalId: answer.body?.invitation_id ?? null, ...(written && !withNote && { noteOmitted: NOTE_LIMIT }) }
          : { outcome: 'failed', error: refusalCode(answer.status, answer.body), retryable: false };
    } catch (err) {
      if (withNote) await releaseBudget(q, noteKey!).catch(() => undefined);
      throw err;
    }
    if (withNote && result.outcome !== 'ok') await releaseBudget(q, noteKey!);
    return result;
  }

  /** The account's own message with this text in the chat, sent no earlier than `since`; not_sent once past it. */
  async function findSent(gw: GatewayCall, chatId: string, text: string, since: Date): Promise<DeliveryCheck> {
    const answer = await gw<{ items?: GatewayMessage[] }>('GET', `/api/v1/chats/${enc(chatId)}/messages`, { query: { limit: CONFIRM_MESSAGES } });
    if (answer.status !== 200) return { status: 'unknown' };
    const items = answer.body?.items ?? [];
    const floor = since.getTime() - CONFIRM_SKEW_MS;
    const found = items.find((m) => !!m.is_sender && sameText(m.text ?? '', text) && (gatewayTime(m.timestamp)?.getTime() ?? 0) >= floor);
    if (found) return { status: 'sent', externalId: found.id ?? null };
    // A full page that does not reach back to `since` cannot tell.
    const oldest = Math.min(...items.map((m) => gatewayTime(m.timestamp)?.getTime() ?? Infinity));
    return items.length < CONFIRM_MESSAGES || oldest < floor ? { status: 'not_sent' } : { status: 'unknown' };
  }

  /** The account's 1:1 chat with the person among its latest chats (a retry whose first try got no chat id back). */
  async function chatWith(gw: GatewayCall, acc: repo.LinkedinAccountRow, providerId: string): Promise<string | null> {
    const answer = await gw<{ items?: { id?: string; attendee_provider_id?: string }[] }>('GET', '/api/v1/chats', {
      query: { account_id: acc.gatewayAccountId!, limit: CONFIRM_MESSAGES },
    });
    if (answer.status !== 200) return null;
    return answer.body?.items?.find((c) => c.attendee_provider_id === providerId && c.id)?.id ?? null;
  }

  async function message(q: Database, gw: GatewayCall, acc: repo.LinkedinAccountRow, action: OutboundAction): Promise<ActionResult> {
    const text = action.text?.trim() ? action.text : null;
    if (!text) return { outcome: 'failed', error: 'empty_message', retryable: false };
    const ids = await repo.leadLinkedinIds(q, action.workspaceId, action.recipient.leadId);
    if (!ids.chatId && ids.providerId && (action.attempt ?? 0) > 0) {
      ids.chatId = await chatWith(gw, acc, ids.providerId);
      if (ids.chatId) await repo.rememberLeadIds(q, { workspaceId: action.workspaceId, leadId: action.recipient.leadId, chatId: ids.chatId });
    }
    if (ids.chatId) {
      // A retry: an earlier try may have reached LinkedIn without its answer coming back. Look before sending again.
      if ((action.attempt ?? 0) > 0) {
        const earlier = await findSent(gw, ids.chatId, text, new Date(action.at.getTime() - RETRY_LOOKBACK_MS));
        if (earlier.status === 'sent') return { outcome: 'ok', externalId: earlier.externalId };
      }
      const answer = await gw<{ message_id?: string }>('POST', `/api/v1/chats/${enc(ids.chatId)}/messages`, { form: { text } });
      if (answer.status === 200 || answer.status === 201) return { outcome: 'ok', externalId: answer.body?.message_id ?? null };
      // The chat is gone at the gateway: start a new one with the person below.
      if (answer.status !== 404) return { outcome: 'failed', error: refusalCode(answer.status, answer.body), retryable: false };
      await repo.rememberLeadIds(q, { workspaceId: action.workspaceId, leadId: action.recipient.leadId, chatId: null });
    }
    const who = await providerIdOf(q, gw, acc, action, ids.providerId);
    if (who.failure) return who.failure;
    const answer = await gw<{ chat_id?: string; message_id?: string }>('POST', '/api/v1/chats', {
      form: { account_id: acc.gatewayAccountId!, attendees_ids: [who.providerId], text },
    });
    if (answer.status !== 200 && answer.status !== 201) return { outcome: 'failed', error: refusalCode(answer.status, answer.body), retryable: false };
    if (answer.body?.chat_id) await repo.rememberLeadIds(q, { workspaceId: action.workspaceId, leadId: action.recipient.leadId, chatId: answer.body.chat_id });
    return { outcome: 'ok', externalId: answer.body?.message_id ?? answer.body?.chat_id ?? null };
  }

  /**
   * Runs a send that no claim reserved (a reply a person decided) within the account's gateway budget: over it, the
   * answer waits until the window has room (the next local day for the week's invitations, the next UTC day for
   * messages). The unit is given back when LinkedIn did not act (a refusal, a 429, an account that waits). A
   * sequence step's unit is the claim's (the descriptor's `budgetsOf`), given back by the engine the same way.
   */
  async function withUnit(
    q: Database,
    acc: repo.LinkedinAccountRow,
    action: OutboundAction,
    budget: 'invites' | 'messages',
    send: () => Promise<ActionResult>,
  ) {
    const key = gatewayBudgetKey(action.workspaceId, acc.id, budget, action.at, safeZone(acc.timeZone));
    const cap = budget === 'invites' ? caps.invitesPerWeek : caps.messagesPerDay;
    if (!(await reserveBudget(q, { key, n: 1, cap, at: action.at }))) {
      const frees = budget === 'invites' ? nextLocalDay(action.at, safeZone(acc.timeZone)) : nextUtcDay(action.at);
      return { outcome: 'rate_limited', retryAfterSeconds: Math.max(60, Math.ceil((frees.getTime() - action.at.getTime()) / 1000)) } as ActionResult;
    }
    const result = await send().catch(async (err: unknown) => {
      await releaseBudget(q, key).catch(() => undefined);
      throw err;
    });
    const didNotAct = result.outcome === 'rate_limited' || (result.outcome === 'failed' && (!result.retryable || result.waitSeconds !== undefined));
    if (didNotAct) await releaseBudget(q, key);
    return result;
  }

  /** A gateway failure as the engine's result; a refused account is marked so that nothing more leaves it. */
  async function failureResult(q: Database, acc: repo.LinkedinAccountRow, action: OutboundAction, err: unknown): Promise<ActionResult> {
    if (!(err instanceof GatewayCallFailed)) throw err;
    const f = err.failure;
    if (f.kind === 'rate_limited') return { outcome: 'rate_limited', retryAfterSeconds: f.retryAfterSeconds };
    if (f.kind === 'auth') {
      await repo.setGatewayError(q, { workspaceId: action.workspaceId, accountId: acc.id, error: AUTH_FAILED, at: action.at });
      return { outcome: 'failed', error: AUTH_FAILED, retryable: true, waitSeconds: AUTH_FAILED_WAIT_SECONDS };
    }
    return { outcome: 'failed', error: f.error, retryable: true, waitSeconds: UNAVAILABLE_WAIT_SECONDS };
  }

  /** The account behind the action: null when the sandbox serves it, else the account or a result that stops here. */
  async function gate(q: Database, action: OutboundAction): Promise<{ acc: repo.LinkedinAccountRow; gw: GatewayCall } | ActionResult | null> {
    if (!action.accountId) return null;
    const acc = await repo.accountOf(q, action.workspaceId, action.accountId);
    if (!acc || acc.delivery === 'sandbox') return null;
    if (acc.delivery === 'tasks') return { outcome: 'needs_person', reason: 'linkedin_tasks' };
    if (action.kind === 'engage') return { outcome: 'needs_person', reason: 'linkedin_engage_by_person' };
    if (acc.gatewayError) return { outcome: 'failed', error: acc.gatewayError, retryable: true, waitSeconds: AUTH_FAILED_WAIT_SECONDS };
    if (!call || !acc.gatewayAccountId)
      return { outcome: 'failed', error: 'linkedin_gateway_not_configured', retryable: true, waitSeconds: AUTH_FAILED_WAIT_SECONDS };
    return { acc, gw: call };
  }

  return {
    channel: 'linkedin',

    async perform(action: OutboundAction, ctx?: DriverContext): Promise<ActionResult> {
      const q = ctx?.db ?? db;
      const gated = await gate(q, action);
      if (gated === null) return fallback.perform(action, ctx);
      if ('outcome' in gated) return gated;
      const { acc, gw } = gated;
      try {
        // A step's unit was reserved by its claim (the descriptor's budgetsOf); a reply decided by a person has no
        // claim and takes its unit here.
        const unit = (budget: 'invites' | 'messages', send: () => Promise<ActionResult>) => (ctx?.claim ? send() : withUnit(q, acc, action, budget, send));
        if (action.kind === 'connect') return await unit('invites', () => invite(q, gw, acc, action).catch((e) => failureResult(q, acc, action, e)));
        if (action.kind === 'message' || action.kind === 'reply')
          return await unit('messages', () => message(q, gw, acc, action).catch((e) => failureResult(q, acc, action, e)));
      } catch (err) {
        return failureResult(q, acc, action, err);
      }
      return { outcome: 'failed', error: `linkedin_unsupported_step_${action.kind}`, retryable: false };
    },

    /**
     * After a crash: a message is looked for among the chat's latest messages (the account's own, same text, no
     * earlier than the attempt). An invitation cannot be told apart at the gateway this way: unknown (never resent).
     */
    async confirm(action: OutboundAction, ctx?: DriverContext): Promise<DeliveryCheck> {
      const q = ctx?.db ?? db;
      const gated = await gate(q, action);
      if (gated === null) return fallback.confirm ? fallback.confirm(action, ctx) : { status: 'unknown' };
      if ('outcome' in gated || (action.kind !== 'message' && action.kind !== 'reply') || !action.text) return { status: 'unknown' };
      const { chatId } = await repo.leadLinkedinIds(q, action.workspaceId, action.recipient.leadId);
      if (!chatId) return { status: 'unknown' };
      try {
        return await findSent(gated.gw, chatId, action.text, action.at);
      } catch {
        return { status: 'unknown' };
      }
    },

    /** Leads of gateway accounts are heard by the gateway watcher (chats, relations); the rest by the sandbox. */
    ...simulatedThrough(fallback, async (input) => {
      const real = await repo.gatewayLeadIds(
        db,
        input.workspaceId,
        input.leads.map((l) => l.leadId),
      );
      return input.leads.filter((l) => !real.has(l.leadId));
    }),
  };
}
