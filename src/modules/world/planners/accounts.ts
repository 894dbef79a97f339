import { mailboxInputProblem, type MailboxInput } from '../../../channels/email/index.js';
import { newMessagingAccountId } from '../../../lib/ids.js';
import { WORLD_DEFAULTS as D, type WorldWorkspace } from '../world.schemas.js';
import { invalidWorld, lower, orderedTime, stripAt, type WsContext } from './plan.js';

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Connected X accounts: one per user id and per handle within a workspace. */
export function planXAccounts(w: WorldWorkspace, cx: WsContext): void {
  const xUsers = new Set<string>();
  const xHandles = new Set<string>();
  (w.xAccounts ?? []).forEach((x, i) => {
    const handle = stripAt(x.handle);
    if (xUsers.has(x.userId)) throw invalidWorld(`${cx.path}/xAccounts/${i}/userId`, 'names the same X account twice');
    if (xHandles.has(handle.toLowerCase())) throw invalidWorld(`${cx.path}/xAccounts/${i}/handle`, 'names the same handle twice');
    xUsers.add(x.userId);
    xHandles.add(handle.toLowerCase());
    const oauth = x.oauth
      ? { accessToken: x.oauth.accessToken, refreshToken: x.oauth.refreshToken, expiresAt: new Date(x.oauth.expiresAt), scopes: x.oauth.scopes ?? [] }
      : null;
    cx.plan.xAccounts.push({ ws: cx.ws, row: { workspace_id: cx.ws.id, user_id: x.userId, handle, created_at: cx.now }, oauth });
  });
}

export function planMessagingAccounts(w: WorldWorkspace, cx: WsContext): void {
  const accounts = w.messagingAccounts ?? [];
  accounts.forEach((a, i) => {
    const at = `${cx.path}/messagingAccounts/${i}`;
    const accountId = a.id ? lower(a.id) : newMessagingAccountId();
    if (a.id) cx.ids.account(accountId, at);
    const timeZone = a.timeZone ?? D.timeZone;
    if (!isTimeZone(timeZone)) throw invalidWorld(`${at}/timeZone`, 'must be an IANA time zone such as Europe/Paris');
    const mode = a.mode ?? D.messagingMode;
    if (a.mailbox !== undefined) {
      const problem = mailboxInputProblem(a.mailbox, 'mailbox');
      if (problem) {
        const [field, ...why] = problem.split(' ');
        throw invalidWorld(`${at}/${field.replace(/\./g, '/')}`, why.join(' '));
      }
      const m = a.mailbox as MailboxInput;
      cx.plan.mailboxes.push({ workspaceId: cx.ws.id, accountId, existing: false, input: m });
    } else if (mode === 'email') {
      throw invalidWorld(`${at}/mailbox`, 'is required for an account of mode "email"');
    }
    // "LinkedIn delivery": only a LinkedIn account has one, and a gateway account names its account at the gateway.
    const linkedin = a.linkedin;
    if (linkedin && mode !== 'linkedin') throw invalidWorld(`${at}/linkedin`, 'is only for an account of mode "linkedin"');
    if (linkedin?.delivery === 'gateway' && !linkedin.gatewayAccountId)
      throw invalidWorld(`${at}/linkedin/gatewayAccountId`, 'is required with delivery "gateway"');
    cx.plan.accounts.push(
      cx.item(at, accountId, !!a.id, {
        id: accountId,
        workspace_id: cx.ws.id,
        name: a.name ?? `${mode} account ${i + 1}`,
        mode,
        stored_status: 'connected',
        time_zone: timeZone,
        connected_at: a.connectedAt === undefined ? cx.now : a.connectedAt,
        warmup_started_at: a.warmupStartedAt ?? null,
        account_score: a.accountScore ?? null,
        relations_count: a.relationsCount ?? null,
        created_at: orderedTime(cx.now, i, accounts.length),
        ...(linkedin && {
          linkedin_delivery: linkedin.delivery,
          linkedin_gateway_account_id: linkedin.gatewayAccountId ?? null,
          // A gateway account is read from the time it was seeded (and at once).
          ...(linkedin.delivery === 'gateway' && { linkedin_next_poll_at: cx.now, linkedin_watch_state: JSON.stringify({ since: cx.now.toISOString() }) }),
        }),
      }),
    );
  });
}
