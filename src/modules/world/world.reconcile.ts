import { conflict } from '../../lib/errors.js';
import type { Database } from '../../db/database.js';
import { invalidWorld, type Item, type Plan, type RefKind } from './planners/index.js';
import * as repo from './world.repository.js';
import { holderOfGatewayAccount } from '../../channels/linkedin/index.js';

const worldConflict = (path: string, message: string) => conflict('world_conflict', `${path} ${message}`, { path });

const KIND_LABEL: Record<RefKind, string> = {
  workspace: 'a workspace in this file or the database',
  sequence: 'a sequence of the same workspace',
  play: 'a Play of the same workspace',
  lead: 'a lead of the same workspace',
  account: 'a messaging account of the same workspace',
  xAccount: 'a connected X account (xAccounts) of the same workspace',
};

const uniq = (ids: string[]) => [...new Set(ids)];
const explicitIds = <R>(items: Item<R>[]) => items.filter((i) => i.explicit).map((i) => i.id);
const refIds = (plan: Plan, kind: RefKind) => plan.refs.filter((r) => r.kind === kind).map((r) => r.id);

type Saved = Awaited<ReturnType<typeof loadSaved>>;
/** Saved owner (workspace id) of each id, per kind of object. */
type Owners = Map<string, string>;

/** The saved rows for every id the file gives or refers to. */
async function loadSaved(db: Database, plan: Plan) {
  const [workspaces, keys, accounts, sequences, plays, candidates, leads, replies, activity] = await Promise.all([
    repo.findWorkspaces(db, uniq([...plan.workspaces.map((w) => w.id), ...refIds(plan, 'workspace')])),
    repo.findApiKeysByHash(
      db,
      plan.workspaces.flatMap((w) => w.keys.map((k) => k.hash)),
    ),
    repo.findOwners(db, 'messaging_accounts', uniq([...explicitIds(plan.accounts), ...refIds(plan, 'account')])),
    repo.findOwners(db, 'sequences', uniq([...explicitIds(plan.sequences), ...refIds(plan, 'sequence')])),
    repo.findOwners(db, 'plays', uniq([...explicitIds(plan.plays), ...refIds(plan, 'play')])),
    repo.findCandidatesById(db, explicitIds(plan.candidates)),
    repo.findLeads(db, uniq([...explicitIds(plan.leads), ...refIds(plan, 'lead')])),
    repo.findOwners(db, 'replies', explicitIds(plan.replies)),
    repo.findOwners(db, 'activity', explicitIds(plan.activity)),
  ]);
  return { workspaces, keys, accounts, sequences, plays, candidates, leads, replies, activity };
}

/** A saved workspace is reported under its saved name; a saved key must belong to the same workspace. */
function markSavedWorkspacesAndKeys(plan: Plan, saved: Saved): void {
  const savedWorkspaces = new Map(saved.workspaces.map((w) => [w.id, w.name]));
  for (const ws of plan.workspaces) {
    const name = savedWorkspaces.get(ws.id);
    if (name !== undefined) {
      ws.existing = true;
      ws.name = name;
    }
  }
  const keyOwner = new Map(saved.keys.map((k) => [k.key_hash, k.workspace_id]));
  for (const ws of plan.workspaces) {
    for (const key of ws.keys) {
      const owner = keyOwner.get(key.hash);
      if (owner === undefined) continue;
      if (owner !== ws.id) throw worldConflict(`${key.path}/key`, 'is already the key of another workspace');
      key.existing = true;
    }
  }
}

/** An explicit id saved in the same workspace is `existing`; saved in another one, it is a 409. */
function markExisting<R>(items: Item<R>[], saved: { id: string; workspace_id: string }[], what: string): Owners {
  const owner = new Map(saved.map((s) => [s.id, s.workspace_id]));
  for (const it of items) {
    const ws = owner.get(it.id);
    if (ws === undefined) continue;
    if (ws !== it.ws.id) throw worldConflict(`${it.path}/id`, `is already the id of a ${what} of another workspace`);
    it.existing = true;
  }
  return owner;
}

/**
 * Candidates match saved ones by id, then by person within a saved Play: an id-less entry is the saved
 * candidate for the same person, an entry with another explicit id contradicts the database. A lead of a
 * Play then links to that Play's candidate for the same person, whether saved or in the file.
 */
async function matchCandidates(db: Database, plan: Plan, saved: Saved, playOwner: Owners): Promise<void> {
  const candidateById = new Map(saved.candidates.map((c) => [c.id, c]));
  for (const c of plan.candidates) {
    const row = candidateById.get(c.id);
    if (!row) continue;
    if (row.workspace_id !== c.ws.id || row.play_id !== c.play.id) throw worldConflict(`${c.path}/id`, 'is already the id of a candidate of another Play');
    c.existing = true;
  }

  const savedPlayIds = uniq([...plan.plays.filter((p) => p.existing).map((p) => p.id), ...refIds(plan, 'play').filter((id) => playOwner.has(id))]);
  const identityUsers = uniq([
    ...plan.candidates.filter((c) => c.play.existing).map((c) => c.row.x_user_id),
    ...plan.leads.filter((l) => l.row.x_user_id && l.row.play_id).map((l) => l.row.x_user_id as string),
  ]);
  const byIdentity = new Map((await repo.findCandidatesByIdentity(db, savedPlayIds, identityUsers)).map((c) => [`${c.play_id}|${c.x_user_id}`, c.id]));
  for (const c of plan.candidates) {
    if (c.existing || !c.play.existing) continue;
    const savedId = byIdentity.get(`${c.play.id}|${c.row.x_user_id}`);
    if (savedId === undefined) continue;
    if (c.explicit) throw worldConflict(`${c.path}/xUserId`, `is already a candidate of this Play under id ${savedId}`);
    c.id = savedId;
    c.row = { ...c.row, id: savedId };
    c.existing = true;
  }

  const fileCandidates = new Map(plan.candidates.map((c) => [`${c.play.id}|${c.row.x_user_id}`, c.id]));
  for (const l of plan.leads) {
    if (!l.row.play_id || !l.row.x_user_id) continue;
    const key = `${l.row.play_id}|${l.row.x_user_id}`;
    l.row.candidate_id = fileCandidates.get(key) ?? byIdentity.get(key) ?? null;
  }
}

/** Every cross-reference names an object of the same workspace, in the file or saved. */
async function checkRefs(db: Database, plan: Plan, saved: Saved, owners: Record<'account' | 'sequence' | 'play' | 'lead', Owners>): Promise<void> {
  const xAccountsSaved = await repo.findXAccounts(db, uniq(plan.refs.filter((r) => r.kind === 'xAccount').map((r) => r.ws.id)), uniq(refIds(plan, 'xAccount')));
  const inFile = new Map<RefKind, Owners>([
    ['workspace', new Map(plan.workspaces.map((w) => [w.id, w.id]))],
    ['sequence', new Map(plan.sequences.map((s) => [s.id, s.ws.id]))],
    ['play', new Map(plan.plays.map((p) => [p.id, p.ws.id]))],
    ['lead', new Map(plan.leads.map((l) => [l.id, l.ws.id]))],
    ['account', new Map(plan.accounts.map((a) => [a.id, a.ws.id]))],
    ['xAccount', new Map(plan.xAccounts.map((x) => [`${x.ws.id}|${x.row.user_id}`, x.ws.id]))],
  ]);
  const inDb = new Map<RefKind, Owners>([
    ['workspace', new Map(saved.workspaces.map((w) => [w.id, w.id]))],
    ['sequence', owners.sequence],
    ['play', owners.play],
    ['lead', owners.lead],
    ['account', owners.account],
    ['xAccount', new Map(xAccountsSaved.map((x) => [`${x.workspace_id}|${x.user_id}`, x.workspace_id]))],
  ]);
  for (const r of plan.refs) {
    const key = r.kind === 'xAccount' ? `${r.ws.id}|${r.id}` : r.id;
    const owner = inFile.get(r.kind)!.get(key) ?? inDb.get(r.kind)!.get(key);
    const ok = r.kind === 'workspace' ? owner !== undefined : owner === r.ws.id;
    if (!ok) throw invalidWorld(r.path, `must name ${KIND_LABEL[r.kind]}`);
  }
}

/** A pending LinkedIn or email reply is shown with its lead's account and sequence, so it needs both. */
function checkReplyLeads(plan: Plan, saved: Saved): void {
  const fileLeads = new Map(plan.leads.map((l) => [l.id, l]));
  const savedLeads = new Map(saved.leads.map((l) => [l.id, l]));
  for (const need of plan.replyLeads) {
    const fromFile = fileLeads.get(need.leadId);
    const lead = fromFile && !fromFile.existing ? fromFile.row : savedLeads.get(need.leadId);
    if (lead && (!lead.account_id || !lead.sequence_id)) {
      throw invalidWorld(need.path, 'names a lead without account or sequenceId; a pending reply shows both (use channel x for X replies)');
    }
  }
}

/**
 * Reads what the database already holds for the ids the file names, marks explicit ids that exist as
 * `existing`, and checks every cross-reference: against the file first, then against saved rows of the
 * same workspace. Runs inside the load's transaction.
 */
export async function reconcile(db: Database, plan: Plan): Promise<void> {
  const saved = await loadSaved(db, plan);
  markSavedWorkspacesAndKeys(plan, saved);
  const owners = {
    account: markExisting(plan.accounts, saved.accounts, 'messaging account'),
    sequence: markExisting(plan.sequences, saved.sequences, 'sequence'),
    play: markExisting(plan.plays, saved.plays, 'Play'),
    lead: markExisting(plan.leads, saved.leads, 'lead'),
  };
  markExisting(plan.replies, saved.replies, 'reply');
  markExisting(plan.activity, saved.activity, 'activity entry');
  await matchCandidates(db, plan, saved, owners.play);
  await checkRefs(db, plan, saved, owners);
  checkReplyLeads(plan, saved);
  await checkGatewayAccounts(db, plan);
}

/**
 * A LinkedIn gateway account belongs to one messaging account in the whole installation (migration 0045): the file
 * may not give it to two of its accounts, nor to one when another account (of any workspace) holds it.
 */
async function checkGatewayAccounts(db: Database, plan: Plan): Promise<void> {
  const byGateway = new Map<string, (typeof plan.accounts)[number]>();
  for (const a of plan.accounts) {
    const gid = (a.row as { linkedin_gateway_account_id?: string | null }).linkedin_gateway_account_id;
    if (!gid) continue;
    const first = byGateway.get(gid);
    if (first) throw worldConflict(`${a.path}/linkedin/gatewayAccountId`, `names the gateway account ${first.path} is linked to`);
    byGateway.set(gid, a);
  }
  for (const [gid, a] of byGateway) {
    const holder = await holderOfGatewayAccount(db, gid);
    if (holder && holder.id !== a.id) throw worldConflict(`${a.path}/linkedin/gatewayAccountId`, 'is linked to another messaging account of this installation');
  }
}
