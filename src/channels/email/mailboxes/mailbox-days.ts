import type { Database } from '../../../db/database.js';
import { mailboxBudgetKey, mailboxCap, budgetKeyText, type PacingRules } from '../../../domain/budgets.js';
import { readBudgetUsage } from '../../../domain/budgets.repository.js';
import { localDay, safeZone } from '../../../domain/time.js';
import { mailboxPacing } from '../send/sent-messages.repository.js';
import * as repo from './mailboxes.repository.js';
import type { MailboxDeps } from './mailbox-deps.js';

/** Today's e-mails of a mailbox against its cap (the `emails` budget, domain/budgets.ts), in its account's time zone. */
export interface MailboxDay {
  sentToday: number;
  capToday: number;
  /** The local day counted, YYYY-MM-DD. */
  day: string;
}

/**
 * A mailbox's `emails` budget for the local day holding `at` (domain/budgets.ts): the one place its cap is computed,
 * for the driver's reservation (send/driver.ts) and the console's *Today's cap* alike. `day` is YYYY-MM-DD in the
 * time zone (`tz`) of the mailbox's account; `cap` its account's message cap, ramped during warm-up (`mailboxCap`);
 * `key` the budget ledger row.
 */
export async function mailboxBudgetDay(db: Database, rules: PacingRules, m: { workspaceId: string; id: string; accountId: string }, at: Date) {
  const account = await mailboxPacing(db, m.workspaceId, m.accountId);
  const tz = safeZone(account?.time_zone);
  const day = localDay(at, tz);
  const cap = mailboxCap(rules, account?.warmup_started_at ? new Date(account.warmup_started_at) : null, at, tz);
  return { key: mailboxBudgetKey(m.workspaceId, m.id, day), day, cap, tz };
}

/**
 * Each mailbox's sends today and today's cap, as the driver reserves them (`mailboxBudgetDay`): the budget row of the
 * local day in the account's time zone, the cap ramped during warm-up. Keyed by mailbox id; empty without config
 * (pacing rules).
 */
export async function mailboxDays(deps: MailboxDeps, workspaceId: string, now: Date = new Date()): Promise<Map<string, MailboxDay>> {
  const out = new Map<string, MailboxDay>();
  if (!deps.config) return out;
  const rules = deps.config.engine.pacing;
  const rows = await repo.listMailboxes(deps.db, deps.cipher, workspaceId);
  const plans = await Promise.all(
    rows.map(async (m) => ({ id: m.id, ...(await mailboxBudgetDay(deps.db, rules, { workspaceId, id: m.id, accountId: m.accountId }, now)) })),
  );
  const used = await readBudgetUsage(
    deps.db,
    plans.map((p) => p.key),
  );
  for (const p of plans) out.set(p.id, { sentToday: used.get(budgetKeyText(p.key)) ?? 0, capToday: p.cap, day: p.day });
  return out;
}
