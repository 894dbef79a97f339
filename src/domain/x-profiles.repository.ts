import type { Insertable } from 'kysely';
import type { Database } from '../db/database.js';
import type { DB } from '../db/schema.js';

export type XProfileRow = Insertable<DB['x_profiles']>;

/**
 * Saves public X profiles (bio, location, followers, picture URL, pinned post), 500 rows per statement: the
 * provider's latest word on a profile replaces the stored one. Written by the public-data providers' answers and by
 * world files (the simulated provider); read by the review page with its candidates.
 */
export async function upsertXProfiles(db: Database, rows: readonly XProfileRow[]): Promise<void> {
  const unique = [...new Map(rows.map((r) => [r.x_user_id, r])).values()];
  for (let i = 0; i < unique.length; i += 500) {
    await db
      .insertInto('x_profiles')
      .values(unique.slice(i, i + 500))
      .onConflict((oc) =>
        oc.column('x_user_id').doUpdateSet((eb) => ({
          bio: eb.ref('excluded.bio'),
          location: eb.ref('excluded.location'),
          followers_count: eb.ref('excluded.followers_count'),
          profile_image_url: eb.ref('excluded.profile_image_url'),
          last_post_text: eb.ref('excluded.last_post_text'),
          last_post_at: eb.ref('excluded.last_post_at'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
  }
}
