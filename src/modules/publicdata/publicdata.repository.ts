import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import { upsertXProfiles } from '../../domain/x-profiles.repository.js';
import type { PublicUser, SandboxWorld } from '../../providers/publicdata/index.js';

/** `handle` is already lower-cased without '@'; stored handles may carry a leading '@'. */
export async function findXAccountByHandle(db: Database, workspaceId: string, handle: string) {
  return db
    .selectFrom('x_accounts')
    .select(['user_id', 'handle'])
    .where('workspace_id', '=', workspaceId)
    .where(sql<string>`lower(handle)`, 'in', [handle, `@${handle}`])
    .executeTakeFirst();
}

export async function listMessagingAccounts(db: Database, workspaceId: string) {
  return db
    .selectFrom('messaging_accounts')
    .select(['id', 'name', 'mode', 'stored_status', 'linkedin_delivery', 'linkedin_gateway_error'])
    .where('workspace_id', '=', workspaceId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The sandbox's simulated outside world, as seeded from world files. */
export async function loadSandboxWorld(db: Database): Promise<SandboxWorld> {
  const [users, follows, unavailable] = await Promise.all([
    db.selectFrom('publicdata_users').select(['x_user_id', 'username', 'name']).orderBy('x_user_id').execute(),
    db.selectFrom('publicdata_follows').select(['follower', 'followed']).orderBy('followed').orderBy('follower').execute(),
    db.selectFrom('publicdata_unavailable').select(['handle']).execute(),
  ]);
  return {
    users: users.map((u) => ({ xUserId: u.x_user_id, username: u.username, name: u.name })),
    follows,
    unavailable: unavailable.map((u) => u.handle),
  };
}

/** A candidate of the workspace with its profile picture's URL (migration 0025); undefined for another workspace's. */
export async function findCandidatePicture(db: Database, workspaceId: string, candidateId: string) {
  return db
    .selectFrom('candidates')
    .leftJoin('x_profiles', 'x_profiles.x_user_id', 'candidates.x_user_id')
    .select(['candidates.name', 'candidates.username', 'x_profiles.profile_image_url'])
    .where('candidates.workspace_id', '=', workspaceId)
    .where('candidates.id', '=', candidateId)
    .executeTakeFirst();
}

/**
 * Keeps what the provider last said of each user's public profile (migration 0025), for the review page. Users the
 * provider gave no profile for are left as they are. Multi-row statements of at most 500 rows.
 */
export async function saveProfiles(db: Database, users: readonly PublicUser[]) {
  const rows = users.flatMap((u) =>
    u.profile
      ? [
          {
            x_user_id: u.xUserId,
            bio: u.profile.bio,
            location: u.profile.location,
            followers_count: u.profile.followersCount,
            profile_image_url: u.profile.profileImageUrl,
            last_post_text: u.profile.lastPost?.text ?? null,
            last_post_at: u.profile.lastPost?.createdAt ?? null,
          },
        ]
      : [],
  );
  await upsertXProfiles(db, rows);
}
