import type { MailboxInput } from '../../../channels/email/index.js';
import type { Insertable } from 'kysely';
import { AppError } from '../../../lib/errors.js';
import type { DB } from '../../../db/schema.js';
import type { WorldWorkspace } from '../world.schemas.js';

export type Row<T extends keyof DB> = Insertable<DB[T]>;

/** The entries of one list of a workspace in the file, e.g. `Entry<'leads'>` for one lead. */
export type Entry<K extends keyof WorldWorkspace> = NonNullable<WorldWorkspace[K]> extends (infer E)[] ? E : never;

export const invalidWorld = (path: string, message: string) => new AppError(400, 'invalid_world', `${path || '(document)'} ${message}`, { path });

export const lower = (id: string) => id.toLowerCase();
export const stripAt = (handle: string) => handle.replace(/^@/, '');
export const json = (value: unknown) => (value === undefined || value === null ? null : JSON.stringify(value));

/** One object of the file on its way to a row: where it is, whose it is, and whether it already exists. */
export interface Item<R> {
  path: string;
  ws: WsPlan;
  id: string;
  explicit: boolean;
  row: R;
  existing: boolean;
}

export interface WsPlan {
  id: string;
  name: string;
  existing: boolean;
  row: Row<'workspaces'>;
  keys: { path: string; secret: string; hash: string; existing: boolean; row: Row<'api_keys'> }[];
}

export type RefKind = 'workspace' | 'sequence' | 'play' | 'lead' | 'account' | 'xAccount';

/** A cross-reference the file makes; reconcile checks it against the file and the database. */
export interface Ref {
  kind: RefKind;
  path: string;
  ws: WsPlan;
  id: string;
}

export interface ReplyLeadNeed {
  path: string;
  leadId: string;
}

export type CandidateItem = Item<Row<'candidates'>> & { play: Item<Row<'plays'>> };

/** Everything the file asks for, with ids assigned and defaults applied, before the database is read. */
export interface Plan {
  workspaces: WsPlan[];
  teamLinks: Row<'team_links'>[];
  xAccounts: { ws: WsPlan; row: Row<'x_accounts'>; oauth: { accessToken: string; refreshToken: string; expiresAt: Date; scopes: string[] } | null }[];
  accounts: Item<Row<'messaging_accounts'>>[];
  /** Mailboxes of new accounts; URLs in plain text here, encrypted by the repository when written. */
  mailboxes: { workspaceId: string; accountId: string; existing: boolean; input: MailboxInput }[];
  sequences: Item<Row<'sequences'>>[];
  plays: Item<Row<'plays'>>[];
  candidates: CandidateItem[];
  leads: Item<Row<'leads'>>[];
  replies: Item<Row<'replies'>>[];
  activity: Item<Row<'activity'>>[];
  refs: Ref[];
  replyLeads: ReplyLeadNeed[];
  publicData: { users: Row<'publicdata_users'>[]; follows: Row<'publicdata_follows'>[]; unavailable: string[]; profiles: Row<'x_profiles'>[] };
}

export function emptyPlan(): Plan {
  return {
    workspaces: [],
    teamLinks: [],
    xAccounts: [],
    accounts: [],
    mailboxes: [],
    sequences: [],
    plays: [],
    candidates: [],
    leads: [],
    replies: [],
    activity: [],
    refs: [],
    replyLeads: [],
    publicData: { users: [], follows: [], unavailable: [], profiles: [] },
  };
}

/** Records an id's first path; a second use of the id in the file is a 400 naming the first. */
export type IdRegistry = (id: string, path: string) => void;

/** Ids must be unique across the file per kind of object; the first holder's path goes in the message. */
export function idRegistry(): IdRegistry {
  const seen = new Map<string, string>();
  return (id: string, path: string) => {
    const first = seen.get(id);
    if (first) throw invalidWorld(`${path}/id`, `duplicates the id at ${first}`);
    seen.set(id, path);
  };
}

/** The id registries of the whole file, one per kind of object, plus the literal keys seen so far. */
export interface FileIds {
  workspace: IdRegistry;
  account: IdRegistry;
  sequence: IdRegistry;
  play: IdRegistry;
  candidate: IdRegistry;
  lead: IdRegistry;
  reply: IdRegistry;
  activity: IdRegistry;
  keyHashes: Map<string, string>;
}

export function fileIds(): FileIds {
  return {
    workspace: idRegistry(),
    account: idRegistry(),
    sequence: idRegistry(),
    play: idRegistry(),
    candidate: idRegistry(),
    lead: idRegistry(),
    reply: idRegistry(),
    activity: idRegistry(),
    keyHashes: new Map(),
  };
}

/**
 * What a planner of one workspace's list works with: the plan it adds to, the workspace, where the
 * workspace is in the file, the file's id registries and the seeding time.
 */
export interface WsContext {
  plan: Plan;
  ws: WsPlan;
  path: string;
  ids: FileIds;
  now: Date;
  /** Notes a cross-reference of this workspace for reconcile. */
  ref(kind: RefKind, path: string, id: string): void;
  item<R>(path: string, id: string, explicit: boolean, row: R): Item<R>;
}

export function wsContext(plan: Plan, ws: WsPlan, path: string, ids: FileIds, now: Date): WsContext {
  return {
    plan,
    ws,
    path,
    ids,
    now,
    ref: (kind, refPath, id) => plan.refs.push({ kind, path: refPath, ws, id }),
    item: (itemPath, id, explicit, row) => ({ path: itemPath, ws, id, explicit, row, existing: false }),
  };
}

/**
 * Listings sort by created_at, then id; creation times a millisecond apart, ending at seeding time,
 * keep them in file order.
 */
export const orderedTime = (now: Date, i: number, n: number) => new Date(now.getTime() - (n - i));
