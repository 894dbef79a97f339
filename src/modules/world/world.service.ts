import type { ErrorObject, ValidateFunction } from 'ajv';
import type { Insertable } from 'kysely';
import type { ServiceDeps } from '../../app/services.js';
import { AppError, conflict } from '../../app/errors.js';
import { compileStrict } from '../../app/validation.js';
import type { Database } from '../../db/database.js';
import type { DB, SequenceStepRow } from '../../db/schema.js';
import type { TextCipher } from '../../lib/crypto.js';
import { newId, newMessagingAccountId } from '../../lib/ids.js';
import { generateApiKeySecret, hashApiKey } from '../workspaces/workspaces.service.js';
import * as repo from './world.repository.js';
import { CHANNEL_OF_STEP } from '../../engine/channels/types.js';
import {
  WORLD_DEFAULTS as D,
  WorldFile,
  type ActivityAction,
  type SeedResult,
  type WorldCandidate,
  type WorldLead,
  type WorldSequenceStep,
  type WorldWorkspace,
} from './world.schemas.js';

type Row<T extends keyof DB> = Insertable<DB[T]>;

const invalidWorld = (path: string, message: string) => new AppError(400, 'invalid_world', `${path || '(document)'} ${message}`, { path });
const worldConflict = (path: string, message: string) => conflict('world_conflict', `${path} ${message}`, { path });

let validator: ValidateFunction | null = null;

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Ajv reports a failed nullable field as one error per anyOf branch plus the anyOf itself; the useful
 * one is the deepest error that is not "must be null" (an object branch reports the bad inner field).
 */
function firstProblem(errors: ErrorObject[]): { path: string; message: string } {
  const located = errors.map((e) => {
    const p = e.params as Record<string, unknown>;
    if (e.keyword === 'additionalProperties') return { path: `${e.instancePath}/${escapePointer(String(p.additionalProperty))}`, message: 'is not a known field', e };
    if (e.keyword === 'required') return { path: `${e.instancePath}/${escapePointer(String(p.missingProperty))}`, message: 'is required', e };
    if (e.keyword === 'enum') return { path: e.instancePath, message: `must be one of: ${(p.allowedValues as unknown[]).join(', ')}`, e };
    if (e.keyword === 'const') return { path: e.instancePath, message: `must be ${JSON.stringify(p.allowedValue)}`, e };
    return { path: e.instancePath, message: e.message ?? 'is invalid', e };
  });
  const specific = located.filter(({ e }) => e.keyword !== 'anyOf' && !(e.keyword === 'type' && (e.params as { type?: string }).type === 'null'));
  const pool = specific.length > 0 ? specific : located;
  if (pool.length === 0) return { path: '', message: 'is not a valid world file' };
  const depth = (path: string) => path.split('/').length;
  const best = pool.reduce((a, b) => (depth(b.path) > depth(a.path) ? b : a));
  return { path: best.path, message: best.message };
}

const lower = (id: string) => id.toLowerCase();
const stripAt = (handle: string) => handle.replace(/^@/, '');
const json = (value: unknown) => (value === undefined || value === null ? null : JSON.stringify(value));

// Actions that act on the outside world cost one unit when they succeed; observations and bookkeeping
// (accepted, reply_detected, reply_dismissed, …) and failed or skipped attempts cost nothing.
const SPENDING_ACTIONS = new Set<ActivityAction>([
  'resolve', 'invite', 'like', 'message', 'followup', 'view_profile', 'endorse', 'comment', 'enrich', 'meeting_invited',
  'reply_sent', 'email_sent', 'x_dm', 'x_follow', 'x_like',
]);

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** One object of the file on its way to a row: where it is, whose it is, and whether it already exists. */
interface Item<R> {
  path: string;
  ws: WsPlan;
  id: string;
  explicit: boolean;
  row: R;
  existing: boolean;
}

interface WsPlan {
  id: string;
  name: string;
  existing: boolean;
  row: Row<'workspaces'>;
  keys: { path: string; secret: string; hash: string; existing: boolean; row: Row<'api_keys'> }[];
}

type RefKind = 'workspace' | 'sequence' | 'play' | 'lead' | 'account' | 'xAccount';

interface Ref {
  kind: RefKind;
  path: string;
  ws: WsPlan;
  id: string;
}

interface ReplyLeadNeed {
  path: string;
  leadId: string;
}

const KIND_LABEL: Record<RefKind, string> = {
  workspace: 'a workspace in this file or the database',
  sequence: 'a sequence of the same workspace',
  play: 'a Play of the same workspace',
  lead: 'a lead of the same workspace',
  account: 'a messaging account of the same workspace',
  xAccount: 'a connected X account (xAccounts) of the same workspace',
};

/** Everything the file asks for, with ids assigned and defaults applied, before the database is read. */
interface Plan {
  workspaces: WsPlan[];
  teamLinks: Row<'team_links'>[];
  xAccounts: { ws: WsPlan; row: Row<'x_accounts'> }[];
  accounts: Item<Row<'messaging_accounts'>>[];
  sequences: Item<Row<'sequences'>>[];
  plays: Item<Row<'plays'>>[];
  candidates: (Item<Row<'candidates'>> & { play: Item<Row<'plays'>> })[];
  leads: Item<Row<'leads'>>[];
  replies: Item<Row<'replies'>>[];
  activity: Item<Row<'activity'>>[];
  refs: Ref[];
  replyLeads: ReplyLeadNeed[];
  publicData: { users: Row<'publicdata_users'>[]; follows: Row<'publicdata_follows'>[]; unavailable: string[] };
}

/** Ids must be unique across the file per kind of object; the first holder's path goes in the message. */
function idRegistry() {
  const seen = new Map<string, string>();
  return (id: string, path: string) => {
    const first = seen.get(id);
    if (first) throw invalidWorld(`${path}/id`, `duplicates the id at ${first}`);
    seen.set(id, path);
  };
}

function planSteps(steps: WorldSequenceStep[], path: string): SequenceStepRow[] {
  return steps.map((s, i) => {
    const at = `${path}/steps/${i}`;
    if (s.index !== undefined && s.index !== i) throw invalidWorld(`${at}/index`, `must equal the step's position in the list (${i})`);
    const variants = s.variants ?? null;
    if (variants && s.message != null) throw invalidWorld(`${at}/variants`, 'a step carries either message or variants, not both');
    const keys = new Set<string>();
    variants?.forEach((v, j) => {
      if (keys.has(v.key)) throw invalidWorld(`${at}/variants/${j}/key`, `duplicates variant key ${JSON.stringify(v.key)}`);
      keys.add(v.key);
    });
    return {
      index: i,
      kind: s.kind,
      delayDays: s.delayDays ?? 0,
      subject: s.subject ?? null,
      message: s.message ?? null,
      actions: (s.actions ?? []).map((a) => ({ type: a.type, count: a.count ?? null, reaction: a.reaction ?? null })),
      variants: variants?.map((v) => ({ key: v.key, weight: v.weight ?? D.variantWeight, messageTmpl: v.messageTmpl })) ?? null,
      tool: s.tool ?? null,
    };
  });
}

/** Approved goes with good_fit and rejected with not_a_good_fit; unreviewed statuses carry no review. */
function candidateStatus(c: WorldCandidate, path: string): Row<'candidates'>['status'] {
  const decision = c.review?.decision ?? null;
  const status = c.status ?? (decision === 'good_fit' ? 'approved' : decision === 'not_a_good_fit' ? 'rejected' : 'proposed');
  const expected = status === 'approved' ? 'good_fit' : status === 'rejected' ? 'not_a_good_fit' : null;
  if (decision !== expected) {
    throw invalidWorld(`${path}/review`, expected ? `status ${status} needs review.decision ${expected}` : `status ${status} is unreviewed, so review must be null`);
  }
  return status;
}

// A seeded lead that is still in a running lane is due at once, so the engine picks it up on its next pass;
// the file can still say otherwise with an explicit nextActionAt (null included).
function defaultNextActionAt(l: WorldLead, now: Date): string | Date | null {
  const stopped = l.automationStopped ?? l.sequenceDone ?? false;
  const finished = l.stage === 'replied' || l.stage === 'failed' || l.stage === 'skipped';
  if (!l.sequenceId || stopped || finished || l.optedOutAt || l.repliedAt) return null;
  return l.createdAt ?? now;
}

function leadRow(l: WorldLead, id: string, ws: WsPlan, path: string, now: Date): Row<'leads'> {
  if (l.person != null && l.name != null && l.person !== l.name) throw invalidWorld(`${path}/name`, 'differs from person (name is the same field in the lead list view)');
  if (l.automationStopped !== undefined && l.sequenceDone !== undefined && l.automationStopped !== l.sequenceDone) {
    throw invalidWorld(`${path}/sequenceDone`, 'differs from automationStopped (both name the same saved flag)');
  }
  const milestones = [l.invitedAt, l.connectedAt, l.messagedAt, l.repliedAt, l.followedAt, l.followedBackAt, l.meetingBookedAt]
    .filter((t): t is string => typeof t === 'string')
    .map((t) => new Date(t));
  const lastActivity = milestones.length ? new Date(Math.max(...milestones.map((d) => d.getTime()))) : null;
  return {
    id,
    workspace_id: ws.id,
    person: l.person ?? l.name ?? null,
    company: l.company ?? null,
    title: l.title ?? null,
    email: l.email ?? null,
    linkedin_url: l.linkedinUrl ?? null,
    x_user_id: l.xUserId ?? null,
    username: l.username ? stripAt(l.username) : null,
    account_id: l.account ? lower(l.account) : null,
    account_user_id: l.accountUserId ?? null,
    sequence_id: l.sequenceId ? lower(l.sequenceId) : null,
    play_id: l.playId ? lower(l.playId) : null,
    candidate_id: null,
    strategy_id: l.strategyId ? lower(l.strategyId) : null,
    strategy_run_id: l.strategyRunId ? lower(l.strategyRunId) : null,
    invite_priority: l.invitePriority ?? 0,
    stage: l.stage ?? D.leadStage,
    current_step: l.currentStep ?? 0,
    next_action_at: l.nextActionAt !== undefined ? l.nextActionAt : defaultNextActionAt(l, now),
    automation_stopped: l.automationStopped ?? l.sequenceDone ?? false,
    variant_key: null,
    invited_at: l.invitedAt ?? null,
    connected_at: l.connectedAt ?? null,
    messaged_at: l.messagedAt ?? null,
    replied_at: l.repliedAt ?? null,
    followed_at: l.followedAt ?? null,
    followed_back_at: l.followedBackAt ?? null,
    meeting_booked_at: l.meetingBookedAt ?? null,
    meeting_outcome: l.meetingOutcome ?? null,
    snoozed_until: l.snoozedUntil ?? null,
    opted_out_at: l.optedOutAt ?? null,
    reply_sentiment: l.replySentiment ?? null,
    last_error: l.lastError ?? null,
    last_activity_at: lastActivity,
    sandbox: json(l.sandbox),
    created_at: l.createdAt ?? now,
    updated_at: now,
  };
}

/** Pure: reads the validated document only. Every in-file rule is checked here, in document order. */
function planWorld(doc: WorldFile, now: Date): Plan {
  const plan: Plan = {
    workspaces: [],
    teamLinks: [],
    xAccounts: [],
    accounts: [],
    sequences: [],
    plays: [],
    candidates: [],
    leads: [],
    replies: [],
    activity: [],
    refs: [],
    replyLeads: [],
    publicData: { users: [], follows: [], unavailable: [] },
  };

  const pd = doc.publicData;
  const userIds = new Map<string, string>();
  const usernames = new Map<string, string>();
  (pd?.users ?? []).forEach((u, i) => {
    const path = `/publicData/users/${i}`;
    const username = stripAt(u.username);
    if (userIds.has(u.xUserId)) throw invalidWorld(`${path}/xUserId`, `duplicates the user at ${userIds.get(u.xUserId)}`);
    if (usernames.has(username.toLowerCase())) throw invalidWorld(`${path}/username`, `duplicates the username at ${usernames.get(username.toLowerCase())}`);
    userIds.set(u.xUserId, path);
    usernames.set(username.toLowerCase(), path);
    plan.publicData.users.push({ x_user_id: u.xUserId, username, name: u.name ?? null });
  });
  const follows = new Set<string>();
  for (const f of pd?.follows ?? []) {
    if (follows.has(`${f.follower}>${f.followed}`)) continue;
    follows.add(`${f.follower}>${f.followed}`);
    plan.publicData.follows.push({ follower: f.follower, followed: f.followed });
  }
  // Handles match case-insensitively, so the stored form is the lower-cased handle without '@'.
  plan.publicData.unavailable = [...new Set((pd?.unavailable ?? []).map((h) => stripAt(h).toLowerCase()))];

  const wsIds = idRegistry();
  const keyHashes = new Map<string, string>();
  const accountIds = idRegistry();
  const sequenceIds = idRegistry();
  const playIds = idRegistry();
  const candidateIds = idRegistry();
  const leadIds = idRegistry();
  const replyIds = idRegistry();
  const activityIds = idRegistry();
  // Listings sort by created_at, then id; creation times a millisecond apart keep them in file order.
  const total = (doc.workspaces ?? []).length;
  const orderedTime = (i: number, n: number) => new Date(now.getTime() - (n - i));

  (doc.workspaces ?? []).forEach((w: WorldWorkspace, wi) => {
    const path = `/workspaces/${wi}`;
    const id = w.id ? lower(w.id) : newId();
    if (w.id) wsIds(id, path);
    const ws: WsPlan = {
      id,
      name: w.name,
      existing: false,
      keys: [],
      row: {
        id,
        name: w.name,
        x_channel_enabled: w.settings?.xChannelEnabled ?? D.xChannelEnabled,
        booking_link: w.settings?.bookingLink ?? null,
        follow_up_sequence_id: w.settings?.followUpSequenceId ? lower(w.settings.followUpSequenceId) : null,
        billing_plan: w.billing?.plan ?? D.billingPlan,
        billing_status: w.billing?.status ?? D.billingStatus,
        energy_balance: w.energy?.balance ?? D.energyBalance,
        energy_daily_refill: w.energy?.dailyRefill ?? D.energyDailyRefill,
        energy_refilled_at: now,
        created_at: orderedTime(wi, total),
      },
    };
    plan.workspaces.push(ws);
    const ref = (kind: RefKind, refPath: string, refId: string) => plan.refs.push({ kind, path: refPath, ws, id: refId });
    const item = <R>(itemPath: string, itemId: string, explicit: boolean, row: R): Item<R> => ({ path: itemPath, ws, id: itemId, explicit, row, existing: false });

    (w.apiKeys ?? []).forEach((k, i) => {
      const at = `${path}/apiKeys/${i}`;
      const secret = k.key ?? generateApiKeySecret();
      const hash = hashApiKey(secret);
      // The message names where the same key appeared, never the key itself.
      if (k.key && keyHashes.has(hash)) throw invalidWorld(`${at}/key`, `is the same key as ${keyHashes.get(hash)}`);
      keyHashes.set(hash, at);
      ws.keys.push({
        path: at,
        secret,
        hash,
        existing: false,
        row: {
          id: newId(),
          workspace_id: id,
          key_hash: hash,
          prefix: secret.slice(0, 8),
          created_at: now,
          expires_at: k.expiresAt ?? null,
          revoked_at: k.revoked ? now : null,
        },
      });
    });

    const clientIds = new Set<string>();
    (w.clients ?? []).forEach((c, i) => {
      const at = `${path}/clients/${i}/workspaceId`;
      const clientId = lower(c.workspaceId);
      if (clientId === id) throw invalidWorld(at, 'names the workspace itself; a workspace cannot be its own client');
      if (clientIds.has(clientId)) throw invalidWorld(at, 'names the same client twice');
      clientIds.add(clientId);
      ref('workspace', at, clientId);
      plan.teamLinks.push({ owner_workspace_id: id, client_workspace_id: clientId, role: c.role ?? D.role, created_at: now });
    });
    if (ws.row.follow_up_sequence_id) ref('sequence', `${path}/settings/followUpSequenceId`, ws.row.follow_up_sequence_id);

    const xUsers = new Set<string>();
    const xHandles = new Set<string>();
    (w.xAccounts ?? []).forEach((x, i) => {
      const handle = stripAt(x.handle);
      if (xUsers.has(x.userId)) throw invalidWorld(`${path}/xAccounts/${i}/userId`, 'names the same X account twice');
      if (xHandles.has(handle.toLowerCase())) throw invalidWorld(`${path}/xAccounts/${i}/handle`, 'names the same handle twice');
      xUsers.add(x.userId);
      xHandles.add(handle.toLowerCase());
      plan.xAccounts.push({ ws, row: { workspace_id: id, user_id: x.userId, handle, created_at: now } });
    });

    const accounts = w.messagingAccounts ?? [];
    accounts.forEach((a, i) => {
      const at = `${path}/messagingAccounts/${i}`;
      const accountId = a.id ? lower(a.id) : newMessagingAccountId();
      if (a.id) accountIds(accountId, at);
      const timeZone = a.timeZone ?? D.timeZone;
      if (!isTimeZone(timeZone)) throw invalidWorld(`${at}/timeZone`, 'must be an IANA time zone such as Europe/Paris');
      const mode = a.mode ?? D.messagingMode;
      plan.accounts.push(
        item(at, accountId, !!a.id, {
          id: accountId,
          workspace_id: id,
          name: a.name ?? `${mode} account ${i + 1}`,
          mode,
          stored_status: 'connected',
          time_zone: timeZone,
          connected_at: a.connectedAt === undefined ? now : a.connectedAt,
          warmup_started_at: a.warmupStartedAt ?? null,
          account_score: a.accountScore ?? null,
          relations_count: a.relationsCount ?? null,
          created_at: orderedTime(i, accounts.length),
        }),
      );
    });

    const sequences = w.sequences ?? [];
    sequences.forEach((s, i) => {
      const at = `${path}/sequences/${i}`;
      const seqId = s.id ? lower(s.id) : newId();
      if (s.id) sequenceIds(seqId, at);
      const revision = s.revision ?? D.revision;
      const approvedRevision = s.approvedRevision ?? null;
      if (approvedRevision !== null && approvedRevision > revision) throw invalidWorld(`${at}/approvedRevision`, `cannot be above revision (${revision})`);
      if (approvedRevision === null && s.approvedAt) throw invalidWorld(`${at}/approvedAt`, 'needs approvedRevision (approval records the exact revision)');
      const steps = planSteps(s.steps ?? [], at);
      const channels = s.channels ?? [...new Set(steps.map((st) => CHANNEL_OF_STEP[st.kind]))];
      const createdAt = orderedTime(i, sequences.length);
      plan.sequences.push(
        item(at, seqId, !!s.id, {
          id: seqId,
          workspace_id: id,
          name: s.name ?? D.sequenceName,
          status: s.status ?? D.sequenceStatus,
          revision,
          approved_revision: approvedRevision,
          approved_at: approvedRevision === null ? null : (s.approvedAt ?? now),
          channels,
          steps: JSON.stringify(steps),
          created_at: createdAt,
          updated_at: createdAt,
        }),
      );
    });

    const plays = w.plays ?? [];
    plays.forEach((p, i) => {
      const at = `${path}/plays/${i}`;
      const playId = p.id ? lower(p.id) : newId();
      if (p.id) playIds(playId, at);
      if (p.sequenceId) ref('sequence', `${at}/sequenceId`, lower(p.sequenceId));
      if (p.accountUserId) ref('xAccount', `${at}/accountUserId`, p.accountUserId);
      const createdAt = orderedTime(i, plays.length);
      const play = item(at, playId, !!p.id, {
        id: playId,
        workspace_id: id,
        name: p.name ?? D.playName,
        status: p.status ?? D.playStatus,
        revision: p.revision ?? D.revision,
        sequence_id: p.sequenceId ? lower(p.sequenceId) : null,
        account_user_id: p.accountUserId ?? null,
        review_api_enabled: p.reviewApiEnabled ?? true,
        autopilot: p.autopilot ?? false,
        created_at: createdAt,
        updated_at: createdAt,
      });
      plan.plays.push(play);
      const members = new Map<string, string>();
      (p.candidates ?? []).forEach((c, j) => {
        const cat = `${at}/candidates/${j}`;
        if (members.has(c.xUserId)) throw invalidWorld(`${cat}/xUserId`, `is already a candidate of this Play at ${members.get(c.xUserId)}`);
        members.set(c.xUserId, cat);
        const candidateId = c.id ? lower(c.id) : newId();
        if (c.id) candidateIds(candidateId, cat);
        const status = candidateStatus(c, cat);
        plan.candidates.push({
          ...item(cat, candidateId, !!c.id, {
            id: candidateId,
            workspace_id: id,
            play_id: playId,
            batch_id: null,
            x_user_id: c.xUserId,
            username: c.username ? stripAt(c.username) : null,
            name: c.name ?? null,
            status,
            review_decision: c.review?.decision ?? null,
            reviewed_at: c.review ? (c.review.reviewedAt ?? now) : null,
            reviewed_by: c.review?.by ?? null,
            sandbox: json(c.sandbox),
            created_at: now,
          }),
          play,
        });
      });
    });

    const leadRepliedAt = new Map<string, string>();
    (w.leads ?? []).forEach((l, i) => {
      const at = `${path}/leads/${i}`;
      const leadId = l.id ? lower(l.id) : newId();
      if (l.id) leadIds(leadId, at);
      const row = leadRow(l, leadId, ws, at, now);
      if (row.account_id) ref('account', `${at}/account`, row.account_id);
      if (row.account_user_id) ref('xAccount', `${at}/accountUserId`, row.account_user_id);
      if (row.sequence_id) ref('sequence', `${at}/sequenceId`, row.sequence_id);
      if (row.play_id) ref('play', `${at}/playId`, row.play_id);
      if (l.repliedAt) leadRepliedAt.set(leadId, l.repliedAt);
      plan.leads.push(item(at, leadId, !!l.id, row));
    });

    (w.replies ?? []).forEach((r, i) => {
      const at = `${path}/replies/${i}`;
      const replyId = r.id ? lower(r.id) : newId();
      if (r.id) replyIds(replyId, at);
      const leadId = lower(r.leadId);
      const channel = r.channel ?? D.replyChannel;
      // X replies are answered on the network itself: the spec's rows for them carry no draft.
      if (channel === 'x' && r.draft != null) throw invalidWorld(`${at}/draft`, 'must be null for channel x (X replies have no draft)');
      ref('lead', `${at}/leadId`, leadId);
      if (channel !== 'x') plan.replyLeads.push({ path: `${at}/leadId`, leadId });
      plan.replies.push(
        item(at, replyId, !!r.id, {
          id: replyId,
          workspace_id: id,
          lead_id: leadId,
          channel,
          classification: r.classification ?? D.classification,
          their_message: r.theirMessage ?? null,
          draft: r.draft ?? null,
          replied_at: r.repliedAt ?? leadRepliedAt.get(leadId) ?? now,
          created_at: now,
        }),
      );
    });

    (w.activity ?? []).forEach((a, i) => {
      const at = `${path}/activity/${i}`;
      const activityId = a.id ? lower(a.id) : newId();
      if (a.id) activityIds(activityId, at);
      const account = a.account ? lower(a.account) : null;
      const leadId = a.leadId ? lower(a.leadId) : null;
      if (account) ref('account', `${at}/account`, account);
      if (leadId) ref('lead', `${at}/leadId`, leadId);
      const outcome = a.outcome ?? D.activityOutcome;
      plan.activity.push(
        item(at, activityId, !!a.id, {
          id: activityId,
          workspace_id: id,
          created_at: a.createdAt ?? now,
          action: a.action,
          outcome,
          units: a.units ?? (outcome === 'ok' && SPENDING_ACTIONS.has(a.action) ? 1 : 0),
          detail: a.detail ?? '',
          account_id: account,
          lead_id: leadId,
        }),
      );
    });
  });
  return plan;
}

/**
 * Reads what the database already holds for the ids the file names, marks explicit ids that exist as
 * `existing`, and checks every cross-reference: against the file first, then against saved rows of the
 * same workspace. Runs inside the load's transaction.
 */
async function reconcile(db: Database, plan: Plan): Promise<void> {
  const explicitIds = <R>(items: Item<R>[]) => items.filter((i) => i.explicit).map((i) => i.id);
  const refIds = (kind: RefKind) => plan.refs.filter((r) => r.kind === kind).map((r) => r.id);
  const uniq = (ids: string[]) => [...new Set(ids)];

  const [workspaces, keys, accounts, sequences, plays, candidatesById, leads, replies, activity] = await Promise.all([
    repo.findWorkspaces(db, uniq([...plan.workspaces.map((w) => w.id), ...refIds('workspace')])),
    repo.findApiKeysByHash(db, plan.workspaces.flatMap((w) => w.keys.map((k) => k.hash))),
    repo.findOwners(db, 'messaging_accounts', uniq([...explicitIds(plan.accounts), ...refIds('account')])),
    repo.findOwners(db, 'sequences', uniq([...explicitIds(plan.sequences), ...refIds('sequence')])),
    repo.findOwners(db, 'plays', uniq([...explicitIds(plan.plays), ...refIds('play')])),
    repo.findCandidatesById(db, explicitIds(plan.candidates)),
    repo.findLeads(db, uniq([...explicitIds(plan.leads), ...refIds('lead')])),
    repo.findOwners(db, 'replies', explicitIds(plan.replies)),
    repo.findOwners(db, 'activity', explicitIds(plan.activity)),
  ]);

  const savedWorkspaces = new Map(workspaces.map((w) => [w.id, w.name]));
  for (const ws of plan.workspaces) {
    const saved = savedWorkspaces.get(ws.id);
    if (saved !== undefined) {
      ws.existing = true;
      ws.name = saved;
    }
  }

  const keyOwner = new Map(keys.map((k) => [k.key_hash, k.workspace_id]));
  for (const ws of plan.workspaces) {
    for (const key of ws.keys) {
      const owner = keyOwner.get(key.hash);
      if (owner === undefined) continue;
      if (owner !== ws.id) throw worldConflict(`${key.path}/key`, 'is already the key of another workspace');
      key.existing = true;
    }
  }

  const markExisting = <R>(items: Item<R>[], saved: { id: string; workspace_id: string }[], what: string) => {
    const owner = new Map(saved.map((s) => [s.id, s.workspace_id]));
    for (const it of items) {
      const ws = owner.get(it.id);
      if (ws === undefined) continue;
      if (ws !== it.ws.id) throw worldConflict(`${it.path}/id`, `is already the id of a ${what} of another workspace`);
      it.existing = true;
    }
    return owner;
  };
  const accountOwner = markExisting(plan.accounts, accounts, 'messaging account');
  const sequenceOwner = markExisting(plan.sequences, sequences, 'sequence');
  const playOwner = markExisting(plan.plays, plays, 'Play');
  const leadOwner = markExisting(plan.leads, leads, 'lead');
  markExisting(plan.replies, replies, 'reply');
  markExisting(plan.activity, activity, 'activity entry');

  const candidateById = new Map(candidatesById.map((c) => [c.id, c]));
  for (const c of plan.candidates) {
    const saved = candidateById.get(c.id);
    if (!saved) continue;
    if (saved.workspace_id !== c.ws.id || saved.play_id !== c.play.id) throw worldConflict(`${c.path}/id`, 'is already the id of a candidate of another Play');
    c.existing = true;
  }

  // Saved Plays may already hold a candidate for the same person: an id-less entry is that candidate,
  // an entry with another explicit id contradicts the database.
  const savedPlayIds = uniq([...plan.plays.filter((p) => p.existing).map((p) => p.id), ...refIds('play').filter((id) => playOwner.has(id))]);
  const identityUsers = uniq([
    ...plan.candidates.filter((c) => c.play.existing).map((c) => c.row.x_user_id),
    ...plan.leads.filter((l) => l.row.x_user_id && l.row.play_id).map((l) => l.row.x_user_id as string),
  ]);
  const byIdentity = new Map(
    (await repo.findCandidatesByIdentity(db, savedPlayIds, identityUsers)).map((c) => [`${c.play_id}|${c.x_user_id}`, c.id]),
  );
  for (const c of plan.candidates) {
    if (c.existing || !c.play.existing) continue;
    const savedId = byIdentity.get(`${c.play.id}|${c.row.x_user_id}`);
    if (savedId === undefined) continue;
    if (c.explicit) throw worldConflict(`${c.path}/xUserId`, `is already a candidate of this Play under id ${savedId}`);
    c.id = savedId;
    c.row = { ...c.row, id: savedId };
    c.existing = true;
  }
  // A lead of a Play links to that Play's candidate for the same person, whether saved or in the file.
  const fileCandidates = new Map(plan.candidates.map((c) => [`${c.play.id}|${c.row.x_user_id}`, c.id]));
  for (const l of plan.leads) {
    if (!l.row.play_id || !l.row.x_user_id) continue;
    const key = `${l.row.play_id}|${l.row.x_user_id}`;
    l.row.candidate_id = fileCandidates.get(key) ?? byIdentity.get(key) ?? null;
  }

  const xAccountsSaved = await repo.findXAccounts(
    db,
    uniq(plan.refs.filter((r) => r.kind === 'xAccount').map((r) => r.ws.id)),
    uniq(refIds('xAccount')),
  );

  // What each workspace has, from the file and from the database.
  const inFile = new Map<RefKind, Map<string, string>>([
    ['workspace', new Map(plan.workspaces.map((w) => [w.id, w.id]))],
    ['sequence', new Map(plan.sequences.map((s) => [s.id, s.ws.id]))],
    ['play', new Map(plan.plays.map((p) => [p.id, p.ws.id]))],
    ['lead', new Map(plan.leads.map((l) => [l.id, l.ws.id]))],
    ['account', new Map(plan.accounts.map((a) => [a.id, a.ws.id]))],
    ['xAccount', new Map(plan.xAccounts.map((x) => [`${x.ws.id}|${x.row.user_id}`, x.ws.id]))],
  ]);
  const inDb = new Map<RefKind, Map<string, string>>([
    ['workspace', new Map(workspaces.map((w) => [w.id, w.id]))],
    ['sequence', sequenceOwner],
    ['play', playOwner],
    ['lead', leadOwner],
    ['account', accountOwner],
    ['xAccount', new Map(xAccountsSaved.map((x) => [`${x.workspace_id}|${x.user_id}`, x.workspace_id]))],
  ]);
  for (const r of plan.refs) {
    const key = r.kind === 'xAccount' ? `${r.ws.id}|${r.id}` : r.id;
    const owner = inFile.get(r.kind)!.get(key) ?? inDb.get(r.kind)!.get(key);
    const ok = r.kind === 'workspace' ? owner !== undefined : owner === r.ws.id;
    if (!ok) throw invalidWorld(r.path, `must name ${KIND_LABEL[r.kind]}`);
  }

  // A pending LinkedIn or email reply is shown with its lead's account and sequence, so it needs both.
  const fileLeads = new Map(plan.leads.map((l) => [l.id, l]));
  const savedLeads = new Map(leads.map((l) => [l.id, l]));
  for (const need of plan.replyLeads) {
    const fromFile = fileLeads.get(need.leadId);
    const lead = fromFile && !fromFile.existing ? fromFile.row : savedLeads.get(need.leadId);
    if (lead && (!lead.account_id || !lead.sequence_id)) {
      throw invalidWorld(need.path, 'names a lead without account or sequenceId; a pending reply shows both (use channel x for X replies)');
    }
  }
}

async function write(db: Database, cipher: TextCipher, plan: Plan, now: Date): Promise<SeedResult['counts']> {
  const fresh = <R>(items: Item<R>[]) => items.filter((i) => !i.existing).map((i) => i.row);
  await repo.insertWorkspaces(db, plan.workspaces.filter((w) => !w.existing).map((w) => w.row));
  await repo.insertTeamLinks(db, plan.teamLinks);
  await repo.insertApiKeys(db, plan.workspaces.flatMap((w) => w.keys.filter((k) => !k.existing).map((k) => k.row)));
  await repo.insertXAccounts(db, plan.xAccounts.map((x) => x.row));
  await repo.insertMessagingAccounts(db, fresh(plan.accounts));
  const sequences = fresh(plan.sequences);
  await repo.insertSequences(db, sequences);
  const plays = fresh(plan.plays);
  await repo.insertPlays(db, plays);

  const newCandidates = plan.candidates.filter((c) => !c.existing);
  const batches = new Map<string, Row<'candidate_batches'>>();
  for (const c of newCandidates) {
    let batch = batches.get(c.play.id);
    if (!batch) {
      batch = { id: newId(), workspace_id: c.ws.id, play_id: c.play.id, source: 'seed', request_id: null, created_at: now };
      batches.set(c.play.id, batch);
    }
    c.row.batch_id = batch.id;
  }
  await repo.insertCandidateBatches(db, [...batches.values()]);
  await repo.insertCandidates(db, newCandidates.map((c) => c.row));

  const leads = fresh(plan.leads);
  await repo.insertLeads(db, leads);
  const replies = fresh(plan.replies);
  await repo.insertReplies(db, cipher, replies);
  const activity = fresh(plan.activity);
  await repo.insertActivity(db, activity);
  await repo.upsertPublicData(db, plan.publicData);
  return {
    sequences: sequences.length,
    plays: plays.length,
    candidates: newCandidates.length,
    leads: leads.length,
    replies: replies.length,
    activity: activity.length,
  };
}

export function createWorldService({ db, clock, cipher }: ServiceDeps) {
  /** Loads a world file (shared/contracts/world-file.md) in one transaction: all of it or nothing. */
  async function seed(input: unknown): Promise<SeedResult> {
    // Validation fills defaults into the document; the caller's object stays as it was given.
    const doc = structuredClone(input);
    validator ??= compileStrict(WorldFile);
    if (!validator(doc)) {
      const problem = firstProblem(validator.errors ?? []);
      throw invalidWorld(problem.path, problem.message);
    }
    const now = clock.now();
    const plan = planWorld(doc as WorldFile, now);
    try {
      const counts = await db.transaction().execute(async (trx) => {
        await reconcile(trx, plan);
        return write(trx, cipher, plan, now);
      });
      return {
        workspaces: plan.workspaces.map((w) => ({
          id: w.id,
          name: w.name,
          status: w.existing ? 'existing' : 'created',
          apiKeys: w.keys.map((k) => k.secret),
        })),
        counts,
      };
    } catch (err) {
      // Integrity violations (SQLSTATE class 23) mean the file contradicts saved data the checks above
      // do not model, such as one handle under two user ids; the transaction has already rolled back.
      const e = err as { code?: unknown; detail?: unknown; message?: string };
      if (!(err instanceof AppError) && typeof e.code === 'string' && e.code.startsWith('23')) {
        const detail = typeof e.detail === 'string' ? ` (${e.detail})` : '';
        throw conflict('world_conflict', `the database refused the world: ${e.message}${detail}`);
      }
      throw err;
    }
  }
  return { seed };
}

export type WorldService = ReturnType<typeof createWorldService>;
