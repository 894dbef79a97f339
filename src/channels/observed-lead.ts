import { sql } from 'kysely';
import type { Database } from '../db/database.js';

/** The lead's own columns of ObservedLead (types.ts); each select adds how the lead's X account is reached. */
export const OBSERVED_LEAD_COLUMNS = ['l.id', 'l.workspace_id', 'l.account_id', 'l.x_user_id', 'l.username'] as const;

/**
 * The select of a lead as the engine's observation path needs it (types.ts ObservedLead): its account, its X handles,
 * and the X account that reaches it (its own, else its Play's). Shared by the watchers' lookups and the push inbound
 * route; each caller adds its own WHERE.
 */
export const observedLeadQuery = (db: Database) =>
  db
    .selectFrom('leads as l')
    .leftJoin('plays as p', 'p.id', 'l.play_id')
    .select([...OBSERVED_LEAD_COLUMNS, sql<string | null>`COALESCE(l.account_user_id, p.account_user_id)`.as('x_account_user_id')]);
