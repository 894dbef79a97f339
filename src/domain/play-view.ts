import type { Selectable } from 'kysely';
import type { PlaysTable } from '../db/schema.js';

export type PlayViewRow = Pick<
  Selectable<PlaysTable>,
  'id' | 'name' | 'status' | 'revision' | 'sequence_id' | 'account_user_id' | 'review_api_enabled' | 'autopilot'
>;

/** The spec's Play object (Resources: Play), every field required. Authoring answers it with `kind` added. */
export function toPlayView(row: PlayViewRow) {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    revision: row.revision,
    sequenceId: row.sequence_id,
    accountUserId: row.account_user_id,
    reviewApiEnabled: row.review_api_enabled,
    autopilot: row.autopilot,
  };
}
