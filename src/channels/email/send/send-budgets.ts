import type { Config } from '../../../config/config.js';
import type { Database } from '../../../db/database.js';
import { mailboxDomainBudgetKey } from '../../../domain/budgets.js';
import { nextDayWindowStart } from '../../../domain/time.js';
import type { ResolvedBudget } from '../../descriptor.js';
import { domainOf, isFreeMailDomain } from '../deliverability/address-checks.js';
import { mailboxBudgetDay } from '../mailboxes/mailbox-days.js';

/**
 * The budgets one e-mail from `mailbox` to `to` draws (docs/email.md "Pacing"), each with its cap and the start of the
 * mailbox's next local day (when a full one has room again):
 * - the mailbox's own day: its account's message cap, ramped during warm-up, in its account's time zone. It holds
 *   even when the mailbox sends for leads of other accounts (the workspace's pool);
 * - for an `email` step to a company's domain (not free mail, where the people are unrelated) while
 *   OUTREACH_MAILBOX_DOMAIN_DAILY_CAP is above 0: that mailbox's day to the domain, capped by it.
 * The claim reserves them (the descriptor's `resolveBudgets`); the driver itself only for a send without a claim (a
 * person's Send anyway, a reply decision).
 */
export async function emailSendBudgets(
  db: Database,
  config: Config,
  mailbox: { workspaceId: string; id: string; accountId: string },
  to: string,
  kind: string,
  at: Date,
): Promise<ResolvedBudget[]> {
  return emailSendBudgetsOn(config, mailbox, await mailboxBudgetDay(db, config.engine.pacing, mailbox, at), to, kind, at);
}

/** The mailbox's day as `mailboxBudgetDay` reads it: its budget key, cap, local day and time zone. */
export type MailboxBudgetDay = Awaited<ReturnType<typeof mailboxBudgetDay>>;

/** `emailSendBudgets` on a mailbox day already read (a batch reads each mailbox's day once). */
export function emailSendBudgetsOn(
  config: Config,
  mailbox: { workspaceId: string; id: string },
  mailboxDay: MailboxBudgetDay,
  to: string,
  kind: string,
  at: Date,
): ResolvedBudget[] {
  const { tz, key, cap, day } = mailboxDay;
  const nextAt = nextDayWindowStart(at, tz, config.engine.pacing);
  const budgets: ResolvedBudget[] = [{ key, cap, nextAt }];
  const domainCap = config.emailGuards.mailboxDomainDailyCap;
  const domain = domainOf(to);
  if (domainCap > 0 && kind === 'email' && domain && !isFreeMailDomain(domain)) {
    budgets.push({ key: mailboxDomainBudgetKey(mailbox.workspaceId, mailbox.id, domain, day), cap: domainCap, nextAt });
  }
  return budgets;
}
