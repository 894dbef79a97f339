import { buildTestApp, type TestApp } from '../build-test-app.js';
import { insertLead } from '../factories.js';
import { ADMIN } from '../world-fixtures.js';
import { startXApiFake, xAppEnv, type XApiFake } from '../x-api-fake.js';
import { ENGINE_ENV } from '../../engine/helpers.js';
import { seedWorkspaces, type SeededWorkspace } from './common.js';
import type { Env } from '../../../src/config/config.js';

// The X world: a local fake of the X API v2 (test/helpers/x-api-fake.ts), an app whose X client points at it, and
// workspaces seeded through the world file (their `xAccounts[].oauth` stand for a finished OAuth dance).

/** Every scope the X driver asks for: DMs, follows, likes, and a refresh token. */
export const X_SCOPES = ['tweet.read', 'users.read', 'dm.read', 'dm.write', 'follows.write', 'like.write', 'offline.access'];
/** The scopes of an account that only sends and reads DMs. */
export const X_DM_SCOPES = ['tweet.read', 'users.read', 'dm.read', 'dm.write', 'offline.access'];

export interface XWorld {
  x: XApiFake;
  t: TestApp;
  /** The app's environment (ENGINE_ENV, the admin token, the X app's settings, then the test's own). */
  env: Partial<Env>;
  /** The seeded workspaces, in the order `workspaces` gave them. */
  workspaces: SeededWorkspace[];
  close(): Promise<void>;
}

/**
 * Starts the X fake (its clock is `now`, epoch milliseconds), adds `users` to it (the accounts the workspaces connect),
 * builds the app at `now` with `env` over the X app's settings, and seeds `workspaces(x)` (world-file entries; the
 * function runs once the fake is up, so it can issue tokens).
 */
export async function startXWorld(o: {
  now: () => number;
  users: { id: string; username: string }[];
  env?: Partial<Env>;
  workspaces: (x: XApiFake) => Record<string, unknown>[];
}): Promise<XWorld> {
  const x = await startXApiFake({ now: o.now });
  for (const user of o.users) x.addUser(user);
  const env: Partial<Env> = { ...ENGINE_ENV, OUTREACH_ADMIN_TOKEN: ADMIN, ...xAppEnv(x), ...o.env };
  const t = await buildTestApp({ now: new Date(o.now()).toISOString(), env });
  const workspaces = await seedWorkspaces(t, o.workspaces(x));
  return {
    x,
    t,
    env,
    workspaces,
    async close() {
      await t?.close();
      await x?.close();
    },
  };
}

/**
 * Records that X user `senderId` DMed `accountUserId` at `at`, as the watcher does (x_dm_senders): X then allows the
 * account's automated DMs to them (domain/policy.ts).
 */
export async function recordWroteFirst(t: TestApp, workspaceId: string, accountUserId: string, senderId: string, at: Date) {
  await t.db.insertInto('x_dm_senders').values({ workspace_id: workspaceId, account_user_id: accountUserId, sender_id: senderId, first_at: at }).execute();
}

/**
 * A person on X added to the fake (`<name>_x`, lowercased) and the lead of the Play `playId` that reaches them with
 * `sequenceId` from `accountUserId`, due at `at`. `acceptsDms` defaults to true; `wroteFirst`: they DMed the account
 * a day before `at` and the watcher recorded it. Returns the person's X user id and the lead's id.
 */
export async function insertXPersonLead(
  w: { x: XApiFake; t: TestApp },
  f: {
    workspaceId: string;
    xUserId: string;
    name: string;
    accountUserId: string;
    playId: string;
    sequenceId: string;
    at: Date;
    acceptsDms?: boolean;
    wroteFirst?: boolean;
  },
) {
  const username = `${f.name.toLowerCase()}_x`;
  w.x.addUser({ id: f.xUserId, username, name: f.name, acceptsDms: f.acceptsDms ?? true });
  if (f.wroteFirst) await recordWroteFirst(w.t, f.workspaceId, f.accountUserId, f.xUserId, new Date(f.at.getTime() - 86_400_000));
  const leadId = await insertLead(w.t.db, f.workspaceId, {
    person: `${f.name} Doe`,
    x_user_id: f.xUserId,
    username,
    account_user_id: f.accountUserId,
    play_id: f.playId,
    sequence_id: f.sequenceId,
    next_action_at: f.at,
  });
  return { xUserId: f.xUserId, leadId };
}

/** An x_engage step's actions: follow the person, then like one of their posts. */
export const FOLLOW_AND_LIKE = [
  { type: 'follow', count: null, reaction: null },
  { type: 'like', count: 1, reaction: null },
] as never;
