import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// The LinkedIn gateway's budgets get a scope of their own, `linkedin_gateway` (domain/budgets.ts BUDGET_WINDOWS): a
// week's invitations (rolling seven local days) and a UTC day's messages of a gateway account. They were rows of scope
// `account` with windows that scope does not have (its budgets count the local day), so the one table of windows could
// not say them. Rows already counted move over, so an account's week of invitations carries on through the upgrade.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    UPDATE send_budgets SET scope = 'linkedin_gateway'
      WHERE scope = 'account' AND budget IN ('invites', 'messages') AND window_kind IN ('rolling_week', 'utc_day');
  `,
  );
}
