import type { Config } from '../../config/config.js';
import type { Database } from '../../db/database.js';
import { withTxRetry } from '../../lib/tx-retry.js';
import type { LinkedinAccountPassCounts, WatchContext } from '../types.js';
import { AUTH_FAILED_BACKOFF_SECONDS, FIRST_POLL_LOOKBACK_MS, runWatchLoop, UNREACHABLE_BACKOFF_SECONDS } from '../watch-loop.js';
import { gatewayTime, publicIdentifierOf } from './api.js';
import { enc, GatewayCallFailed, gatewayCaller, gatewaySettingsOf, type GatewayCall } from './client.js';
import { AUTH_FAILED, type GatewayMessage } from './driver.js';
import * as repo from './accounts.repository.js';

export interface LinkedinWatcherDeps {
  db: Database;
  config: Pick<Config, 'linkedin'> & { engine: Pick<Config['engine'], 'observeDays'> };
}

/** Pages of chats (newest activity first) read per poll; more wait for the next poll. */
const MAX_CHAT_PAGES = 5;
const CHAT_PAGE = 50;
/** Of one chat, the latest messages read per poll. */
const MESSAGE_PAGE = 50;
/** Pages of relations (newest first) compared with the leads awaiting acceptance. */
const MAX_RELATION_PAGES = 10;
const RELATION_PAGE = 100;
const MAX_AWAITING = 5_000;
/** A message's text handed on is at most this long (the engine bounds what it stores and sends again). */
const MAX_TEXT = 20_000;
const DAY_MS = 86_400_000;

interface GatewayChat {
  id?: string;
  attendee_provider_id?: string;
  type?: number;
  timestamp?: string | null;
}
interface GatewayRelation {
  member_id?: string;
  public_identifier?: string;
  created_at?: number | string;
}
/**
 * A relation's public identifier as the person's key (domain/linkedin-profile.ts: any case, raw or percent-encoded,
 * NFC), the key a lead's address gives; null when it is not one.
 */
const relationPublicId = (id: string) => publicIdentifierOf(`https://www.linkedin.com/in/${id}`);
interface Page<T> {
  items?: T[];
  cursor?: string | null;
}

const emptyCounts = (): LinkedinAccountPassCounts => ({ replies: 0, acceptances: 0, unmatched: 0, unreadable: 0 });

/**
 * Hears back on LinkedIn gateway accounts by polling (no public URL needed; docs/linkedin.md): the chats with
 * activity since the last poll (`GET /api/v1/chats`), then the latest messages of those with a lead of this account
 * (`GET /api/v1/chats/{id}/messages`): a message the account did not send is the lead's reply, through the engine's
 * one observation path. `GET /api/v1/users/relations` tells which invited leads are now connections (acceptances).
 * Each item is applied alone, in its own transaction; a reply already on record is not recorded twice.
 */
export function createLinkedinWatcher(deps: LinkedinWatcherDeps) {
  const { db, config } = deps;
  const settings = gatewaySettingsOf(config.linkedin);

  async function changedChats(gw: GatewayCall, acc: repo.WatchedLinkedinAccount, since: Date): Promise<GatewayChat[]> {
    const chats: GatewayChat[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_CHAT_PAGES; page++) {
      const answer = await gw<Page<GatewayChat>>('GET', '/api/v1/chats', {
        query: { account_id: acc.gatewayAccountId, limit: CHAT_PAGE, after: since.toISOString(), cursor },
      });
      if (answer.status !== 200) throw new GatewayCallFailed({ kind: 'unavailable', error: `linkedin_gateway_${answer.status}` });
      let older = false;
      for (const c of answer.body?.items ?? []) {
        const at = gatewayTime(c.timestamp);
        if (at && at.getTime() <= since.getTime()) {
          older = true;
          break;
        }
        chats.push(c);
      }
      cursor = answer.body?.cursor ?? undefined;
      if (older || !cursor) break;
    }
    return chats;
  }

  async function readChat(
    gw: GatewayCall,
    acc: repo.WatchedLinkedinAccount,
    chat: GatewayChat,
    since: Date,
    ctx: WatchContext,
    counts: LinkedinAccountPassCounts,
  ) {
    // Group chats are not a conversation with one lead.
    if (!chat.id || (chat.type !== undefined && chat.type !== 0)) return;
    const lead = await repo.leadForChat(db, {
      workspaceId: acc.workspaceId,
      accountId: acc.accountId,
      chatId: chat.id,
      providerId: chat.attendee_provider_id ?? null,
    });
    if (!lead) {
      counts.unmatched += 1;
      return;
    }
    const answer = await gw<Page<GatewayMessage>>('GET', `/api/v1/chats/${enc(chat.id)}/messages`, { query: { limit: MESSAGE_PAGE } });
    if (answer.status !== 200) throw new GatewayCallFailed({ kind: 'unavailable', error: `linkedin_gateway_${answer.status}` });
    if (lead.linkedin_chat_id !== chat.id) await repo.rememberLeadIds(db, { workspaceId: acc.workspaceId, leadId: lead.id, chatId: chat.id });
    const theirs = (answer.body?.items ?? [])
      .map((m) => ({ m, at: gatewayTime(m.timestamp) }))
      .filter(({ m, at }) => !m.is_sender && at !== null && at.getTime() > since.getTime())
      .sort((a, b) => a.at!.getTime() - b.at!.getTime());
    for (const { m, at } of theirs) {
      const when = at!.getTime() > ctx.now.getTime() ? ctx.now : at!;
      const text = typeof m.text === 'string' ? m.text.slice(0, MAX_TEXT) : null;
      try {
        const r = await withTxRetry(() =>
          db
            .transaction()
            .execute((trx) => ctx.apply(trx, { type: 'reply', leadId: lead.id, channel: 'linkedin', text, at: when }, lead, ctx.now, ctx.summary)),
        );
        if (r === 'replied' || r === 'snoozed') counts.replies += 1;
      } catch {
        counts.unreadable += 1;
      }
    }
  }

  async function checkAcceptances(gw: GatewayCall, acc: repo.WatchedLinkedinAccount, ctx: WatchContext, counts: LinkedinAccountPassCounts) {
    const awaiting = await repo.awaitingAcceptance(db, {
      workspaceId: acc.workspaceId,
      accountId: acc.accountId,
      since: new Date(ctx.now.getTime() - config.engine.observeDays * DAY_MS),
      limit: MAX_AWAITING,
    });
    if (awaiting.length === 0) return;
    const byProvider = new Map(awaiting.filter((l) => l.linkedin_provider_id).map((l) => [l.linkedin_provider_id!, l]));
    const byPublicId = new Map<string, repo.LinkedinLead>();
    for (const l of awaiting) {
      const id = publicIdentifierOf(l.linkedin_url);
      if (id) byPublicId.set(id, l);
    }
    const earliest = Math.min(...awaiting.map((l) => new Date(l.invited_at!).getTime()));
    const found = new Map<string, { lead: repo.LinkedinLead; at: Date }>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_RELATION_PAGES && found.size < awaiting.length; page++) {
      const answer = await gw<Page<GatewayRelation>>('GET', '/api/v1/users/relations', {
        query: { account_id: acc.gatewayAccountId, limit: RELATION_PAGE, cursor },
      });
      if (answer.status !== 200) throw new GatewayCallFailed({ kind: 'unavailable', error: `linkedin_gateway_${answer.status}` });
      const items = answer.body?.items ?? [];
      let older = false;
      for (const r of items) {
        const lead =
          (r.member_id && byProvider.get(r.member_id)) || (r.public_identifier && byPublicId.get(relationPublicId(r.public_identifier) ?? '')) || null;
        const at = gatewayTime(r.created_at);
        if (lead && !found.has(lead.id)) found.set(lead.id, { lead, at: at && at.getTime() <= ctx.now.getTime() ? at : ctx.now });
        // Newest first: a connection made before the earliest invitation cannot be an acceptance of ours.
        if (at && at.getTime() < earliest) older = true;
      }
      cursor = answer.body?.cursor ?? undefined;
      if (older || !cursor) break;
    }
    for (const { lead, at } of found.values()) {
      const invitedAt = new Date(lead.invited_at!);
      const when = at.getTime() < invitedAt.getTime() ? invitedAt : at;
      try {
        const r = await withTxRetry(() =>
          db.transaction().execute((trx) => ctx.apply(trx, { type: 'invite_accepted', leadId: lead.id, at: when }, lead, ctx.now, ctx.summary)),
        );
        if (r) counts.acceptances += 1;
      } catch {
        counts.unreadable += 1;
      }
    }
  }

  async function pollAccount(acc: repo.WatchedLinkedinAccount, ctx: WatchContext): Promise<LinkedinAccountPassCounts> {
    const { now } = ctx;
    const counts = emptyCounts();
    const later = (s: number) => new Date(now.getTime() + s * 1000);
    let nextPollAt = later(config.linkedin.pollIntervalSeconds);
    let state: repo.LinkedinWatchState | undefined;
    if (!settings) {
      await repo.savePollPosition(db, { workspaceId: acc.workspaceId, accountId: acc.accountId, nextPollAt: later(AUTH_FAILED_BACKOFF_SECONDS) });
      return { ...counts, error: 'linkedin_gateway_unreachable' };
    }
    const gw = gatewayCaller(settings);
    const since = new Date(acc.state?.readUntil ?? acc.state?.since ?? now.getTime() - FIRST_POLL_LOOKBACK_MS);
    try {
      const chats = await changedChats(gw, acc, since);
      // Oldest first, so a lead's messages are on record in the order they were written.
      for (const chat of [...chats].reverse()) await readChat(gw, acc, chat, since, ctx, counts);
      // Read up to this poll: a message written during the poll is newer than `now` only if clocks disagree, and
      // a reply read twice is refused by the engine (one reply per instant).
      state = { ...acc.state, readUntil: now.toISOString() };
      await checkAcceptances(gw, acc, ctx, counts);
    } catch (err) {
      if (!(err instanceof GatewayCallFailed)) throw err;
      const f = err.failure;
      if (f.kind === 'auth') {
        counts.error = AUTH_FAILED;
        await repo.setGatewayError(db, { workspaceId: acc.workspaceId, accountId: acc.accountId, error: AUTH_FAILED, at: now });
        nextPollAt = later(AUTH_FAILED_BACKOFF_SECONDS);
      } else if (f.kind === 'rate_limited') {
        counts.error = 'linkedin_gateway_rate_limited';
        nextPollAt = later(Math.max(f.retryAfterSeconds, config.linkedin.pollIntervalSeconds));
      } else {
        counts.error = 'linkedin_gateway_unreachable';
        nextPollAt = later(UNREACHABLE_BACKOFF_SECONDS);
      }
    }
    await repo.savePollPosition(db, { workspaceId: acc.workspaceId, accountId: acc.accountId, nextPollAt, state });
    return counts;
  }

  /** Polls every gateway account whose poll is due, through the shared watcher loop (lease, schedule, summary). */
  const watch = (ctx: WatchContext) =>
    runWatchLoop(
      {
        claimDue: (q) => repo.claimDueAccounts(db, q),
        keyOf: (acc) => acc.accountId,
        idOf: (acc) => `${acc.workspaceId}|${acc.accountId}`,
        poll: pollAccount,
        slot: 'linkedinAccounts',
        batchSize: 16,
        concurrency: 1,
      },
      ctx,
    );

  return { watch, pollAccount };
}
