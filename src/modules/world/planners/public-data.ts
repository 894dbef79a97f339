import type { WorldFile } from '../world.schemas.js';
import { invalidWorld, stripAt, type Plan } from './plan.js';

/** The simulated public-data provider: users unique by id and handle, follow edges and handles deduplicated. */
export function planPublicData(pd: WorldFile['publicData'], plan: Plan): void {
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
    // The profile is what the provider says of the user: the review page shows it beside every candidate with this id.
    const profile = {
      bio: u.bio || null,
      location: u.location || null,
      followers_count: u.followersCount ?? null,
      profile_image_url: u.profileImageUrl ?? null,
      last_post_text: u.lastPost?.text ?? null,
      last_post_at: u.lastPost?.createdAt ?? null,
    };
    if (Object.values(profile).some((v) => v !== null)) plan.publicData.profiles.push({ x_user_id: u.xUserId, ...profile });
  });
  const follows = new Set<string>();
  for (const f of pd?.follows ?? []) {
    if (follows.has(`${f.follower}>${f.followed}`)) continue;
    follows.add(`${f.follower}>${f.followed}`);
    plan.publicData.follows.push({ follower: f.follower, followed: f.followed });
  }
  // Handles match case-insensitively, so the stored form is the lower-cased handle without '@'.
  plan.publicData.unavailable = [...new Set((pd?.unavailable ?? []).map((h) => stripAt(h).toLowerCase()))];
}
