import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// Issue 27, review rows a person can judge (docs/public-data.md, "Profiles"): what the public-data provider last said
// about an X user's public profile (picture URL, bio, location, follower count, pinned or last post), one row per
// user id. Public data, shared by every workspace the way the provider's answers are: the review page reads it with
// its candidates in one join on the user id, and the console's avatar route reads the picture URL from it.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    CREATE TABLE x_profiles (
      x_user_id text PRIMARY KEY,
      bio text,
      location text,
      followers_count bigint,
      profile_image_url text,
      last_post_text text,
      last_post_at timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
  `,
  );
}
