import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { Billing, EnergyService, EnergyState } from '../energy/index.js';
import * as repo from './publicdata.repository.js';
import type { ReadinessIssueRow, ReadinessOutput } from './publicdata.schemas.js';
import { domainCheckIssues, failedMailboxes, pausedMailboxes, type DomainChecksService } from '../../channels/email/index.js';
import { listXAccounts } from '../workspaces/index.js';
import type { TextCipher } from '../../lib/crypto.js';
import type { LinkedinDeliveryMode } from '../../domain/vocabulary.js';
import { xOauthRepository } from '../../channels/x/index.js';

export const READINESS_NOTE =
  'Read-only snapshot of saved state. The public-data provider was not contacted (providerHealthChecked: false) and nothing here guarantees delivery.';

/** Stable issue codes (docs/public-data.md lists them with what a caller should do). */
export const ISSUE = {
  noConnectedAccount: 'no_connected_account',
  noMessagingAccount: 'no_messaging_account',
  messagingAccountDisconnected: 'messaging_account_disconnected',
  billingInactive: 'billing_inactive',
  billingPastDue: 'billing_past_due',
  energyLow: 'energy_low',
  energyExhausted: 'energy_exhausted',
  sectionPartial: 'section_partial',
  sectionUnavailable: 'section_unavailable',
  mailboxAuthFailed: 'mailbox_auth_failed',
  mailboxUnreachable: 'mailbox_unreachable',
  mailboxPausedBounces: 'mailbox_paused_bounces',
  mailboxPausedComplaints: 'mailbox_paused_complaints',
  mailboxPausedManual: 'mailbox_paused_manual',
  mailboxSpfMissing: 'mailbox_spf_missing',
  mailboxDkimMissing: 'mailbox_dkim_missing',
  mailboxDmarcMissing: 'mailbox_dmarc_missing',
  mailboxMxMissing: 'mailbox_mx_missing',
  xAccountDisconnected: 'x_account_disconnected',
  linkedinGatewayAuthFailed: 'linkedin_gateway_auth_failed',
  mailboxUncertainSends: 'mailbox_uncertain_sends',
  accountUncertainSends: 'account_uncertain_sends',
} as const;

/** A balance under this share of the daily refill is reported as low. */
export const ENERGY_LOW_FRACTION = 0.1;

export interface ReadinessSources {
  xAccounts(workspaceId: string): Promise<{ userId: string; handle: string }[]>;
  messagingAccounts(
    workspaceId: string,
  ): Promise<{ id: string; name: string; mode: string; storedStatus: string; linkedinGateway?: { delivery: LinkedinDeliveryMode; error: string | null } }[]>;
  billing(workspaceId: string): Promise<Billing>;
  energy(workspaceId: string): Promise<EnergyState>;
  /** Mailboxes whose last SMTP or IMAP login failed, or that a reputation guard paused (they do not send until fixed). */
  failedMailboxes(
    workspaceId: string,
  ): Promise<{ id: string; address: string; health: string; detail?: string | null; oauthProvider?: 'google' | 'microsoft' | null }[]>;
  /** Connected X accounts whose refresh token X refused: the real X driver leaves them alone until reconnected. */
  disconnectedXAccounts(workspaceId: string): Promise<{ userId: string; reason: 'token_refused' | 'by_person' }[]>;
  /** Open tasks per account id (messaging account id or X user id), paused sequences' hidden ones left out. */
  openTasks(workspaceId: string): Promise<Map<string, number>>;
  /** What the sending-domain checks found missing (docs/deliverability.md); such a mailbox still sends. */
  mailboxDomains(workspaceId: string): Promise<ReadinessIssueRow[]>;
  /** Open uncertain sends (docs/tasks.md) per mailbox, or per account when no mailbox is known. */
  uncertainSends(workspaceId: string): Promise<UncertainSends>;
}

type UncertainSends = { mailboxId: string | null; address: string | null; accountId: string | null; count: number }[];

/** What readiness reads of the task queue (the tasks module's countOpenByAccount, lent by the composition root). */
export interface OpenTaskCounts {
  countOpenByAccount(workspaceId: string): Promise<Map<string, number>>;
  /** The tasks module's uncertainSends (the join of its tasks to the e-mail driver's stored sends is its repository's). */
  uncertainSends?(workspaceId: string): Promise<UncertainSends>;
}

type Observed<T> = { ok: true; value: T; observedAt: string } | { ok: false };
type XAccounts = Awaited<ReturnType<ReadinessSources['xAccounts']>>;
type MessagingAccounts = Awaited<ReturnType<ReadinessSources['messagingAccounts']>>;
type FailedMailboxes = Awaited<ReturnType<ReadinessSources['failedMailboxes']>>;
type DisconnectedX = Awaited<ReturnType<ReadinessSources['disconnectedXAccounts']>>;
type OpenTasks = Awaited<ReturnType<ReadinessSources['openTasks']>>;

const issue = (code: string, message: string, retryable: boolean): ReadinessIssueRow => ({ code, message, retryable });

const unavailableSection = (name: string) => ({
  state: 'unavailable' as const,
  observedAt: null,
  data: null,
  issues: [issue(ISSUE.sectionUnavailable, `the ${name} section could not be read; try again shortly`, true)],
});

export function createReadinessService(deps: {
  db: Database;
  clock: Clock;
  energy: EnergyService;
  cipher: TextCipher;
  tasks: OpenTaskCounts;
  mailboxDomains?: Pick<DomainChecksService, 'forWorkspace'>;
}) {
  const { db, clock, energy } = deps;
  const xTokens = xOauthRepository(deps.cipher);

  const defaults: ReadinessSources = {
    xAccounts: async (ws) => (await listXAccounts(db, ws)).map((a) => ({ userId: a.user_id, handle: a.handle })),
    messagingAccounts: async (ws) =>
      (await repo.listMessagingAccounts(db, ws)).map((a) => ({
        id: a.id,
        name: a.name,
        mode: a.mode,
        storedStatus: a.stored_status,
        linkedinGateway: { delivery: a.linkedin_delivery, error: a.linkedin_gateway_error },
      })),
    billing: (ws) => energy.getBilling(ws),
    energy: (ws) => energy.getEnergy(ws),
    // A mailbox a reputation guard paused sends nothing either (health `paused_bounces` / `paused_complaints` here), nor
    // one a person paused (`paused_manual`).
    failedMailboxes: async (ws) => [
      ...(await failedMailboxes(db, ws)),
      ...(await pausedMailboxes(db, ws)).map((p) => ({ id: p.id, address: p.address, health: `paused_${p.reason}`, detail: p.detail })),
    ],
    disconnectedXAccounts: (ws) => xTokens.listDisconnected(db, ws),
    openTasks: (ws) => deps.tasks.countOpenByAccount(ws),
    mailboxDomains: async (ws) => (deps.mailboxDomains ? domainCheckIssues(await deps.mailboxDomains.forWorkspace(ws)) : []),
    uncertainSends: async (ws) => (deps.tasks.uncertainSends ? deps.tasks.uncertainSends(ws) : []),
  };
  const sources: ReadinessSources = { ...defaults };

  /** Replaces one source (tests make each fail in turn); the returned function restores it. */
  function overrideSource<K extends keyof ReadinessSources>(name: K, source: ReadinessSources[K]): () => void {
    sources[name] = source;
    return () => {
      sources[name] = defaults[name];
    };
  }

  async function observe<T>(read: () => Promise<T>): Promise<Observed<T>> {
    try {
      const value = await read();
      return { ok: true, value, observedAt: clock.now().toISOString() };
    } catch {
      // A failing source degrades its own section; the snapshot as a whole still answers.
      return { ok: false };
    }
  }

  function accountsSection(
    x: Observed<XAccounts>,
    m: Observed<MessagingAccounts>,
    mb: Observed<FailedMailboxes>,
    xd: Observed<DisconnectedX>,
    ot: Observed<OpenTasks>,
  ): ReadinessOutput['accounts'] {
    if (!x.ok && !m.ok) return unavailableSection('accounts');
    const issues: ReadinessIssueRow[] = [];
    if (x.ok && x.value.length === 0) {
      issues.push(issue(ISSUE.noConnectedAccount, 'no X account is connected; connect one in the product before eligibility checks or Plays', false));
    }
    if (m.ok && m.value.length === 0) {
      issues.push(issue(ISSUE.noMessagingAccount, 'no messaging account is connected; sequences have no sender', false));
    }
    if (m.ok) {
      for (const a of m.value.filter((a) => a.storedStatus !== 'connected')) {
        issues.push(issue(ISSUE.messagingAccountDisconnected, `messaging account ${a.id} is ${a.storedStatus}; reconnect it in the product`, false));
      }
      for (const a of m.value.filter((a) => a.linkedinGateway?.delivery === 'gateway' && a.linkedinGateway.error === ISSUE.linkedinGatewayAuthFailed)) {
        issues.push(
          issue(
            ISSUE.linkedinGatewayAuthFailed,
            `the LinkedIn gateway refused messaging account ${a.id}; nothing is sent or read for it until it is linked again (outreach linkedin connect)`,
            false,
          ),
        );
      }
    }
    if (mb.ok) {
      for (const f of mb.value) {
        if (f.health.startsWith('paused_')) {
          const code =
            f.health === 'paused_complaints'
              ? ISSUE.mailboxPausedComplaints
              : f.health === 'paused_manual'
                ? ISSUE.mailboxPausedManual
                : ISSUE.mailboxPausedBounces;
          const why = f.detail ?? f.health;
          issues.push(
            issue(code, `mailbox ${f.address} (${f.id}) is paused: ${why}; it sends nothing until a person resumes it (npx outreach mailbox resume)`, false),
          );
          continue;
        }
        issues.push(
          f.health === 'auth_failed'
            ? issue(
                ISSUE.mailboxAuthFailed,
                f.oauthProvider
                  ? `mailbox ${f.address} (${f.id}) lost its ${f.oauthProvider === 'google' ? 'Google' : 'Microsoft 365'} authorization; it sends and is read no more until a person reconnects the mailbox (Accounts, or npx outreach mailbox connect --provider ${f.oauthProvider})`
                  : `mailbox ${f.address} (${f.id}) refused the login; it sends and is read no more until its password is fixed (npx outreach mailbox add)`,
                false,
              )
            : issue(ISSUE.mailboxUnreachable, `mailbox ${f.address} (${f.id}) could not be reached; it is tried again in a few minutes`, true),
        );
      }
    }
    if (xd.ok) {
      const handles = new Map((x.ok ? x.value : []).map((a) => [a.userId, a.handle]));
      for (const { userId, reason } of xd.value) {
        const name = handles.has(userId) ? `@${handles.get(userId)} (${userId})` : userId;
        const why = reason === 'by_person' ? 'a person disconnected it' : 'X refused its refresh token';
        issues.push(
          issue(
            ISSUE.xAccountDisconnected,
            `X account ${name} is disconnected: ${why}; its steps wait until a person connects it again (Accounts, "Connect X account")`,
            false,
          ),
        );
      }
    }
    if (!x.ok || !m.ok) {
      const missing = !x.ok ? 'connected X accounts' : 'messaging accounts';
      issues.push(issue(ISSUE.sectionPartial, `${missing} could not be read; try again shortly`, true));
    }
    const times = [x, m].flatMap((o) => (o.ok ? [o.observedAt] : []));
    // Open tasks are an extension: when the queue cannot be read the counts are left out, the section stays as it is.
    const counts = ot.ok ? ot.value : null;
    const withTasks = <T extends object>(entry: T, id: string) => (counts ? { ...entry, openTasks: counts.get(id) ?? 0 } : entry);
    return {
      state: x.ok && m.ok ? 'complete' : 'partial',
      observedAt: times.sort()[0],
      data: {
        xAccounts: x.ok ? x.value.map((a) => withTasks(a, a.userId)) : null,
        messagingAccounts: m.ok ? m.value.map((a) => withTasks(a, a.id)) : null,
        ...(counts && { openTasks: [...counts.values()].reduce((sum, n) => sum + n, 0) }),
      },
      issues,
    };
  }

  /** One issue per mailbox (or account) with sends whose delivery is uncertain: they do not block, a person decides each. */
  function uncertainIssues(rows: UncertainSends): ReadinessIssueRow[] {
    const sends = (n: number) => (n === 1 ? '1 send whose delivery is uncertain' : `${n} sends whose delivery is uncertain`);
    return rows.map((r) =>
      r.mailboxId
        ? issue(ISSUE.mailboxUncertainSends, `mailbox ${r.address} (${r.mailboxId}) has ${sends(r.count)}; a person decides each (console: Tasks)`, false)
        : issue(ISSUE.accountUncertainSends, `account ${r.accountId ?? 'none'} has ${sends(r.count)}; a person decides each (console: Tasks)`, false),
    );
  }

  function billingSection(b: Observed<Billing>): ReadinessOutput['billing'] {
    if (!b.ok) return unavailableSection('billing');
    const issues: ReadinessIssueRow[] = [];
    if (b.value.status === 'canceled') {
      issues.push(issue(ISSUE.billingInactive, 'billing is canceled; energy is no longer refilled', false));
    } else if (b.value.status === 'past_due') {
      issues.push(issue(ISSUE.billingPastDue, 'billing is past due; settle the invoice in the product', false));
    }
    return { state: 'complete', observedAt: b.observedAt, data: { plan: b.value.plan, status: b.value.status }, issues };
  }

  function energySection(e: Observed<EnergyState>): ReadinessOutput['energy'] {
    if (!e.ok) return unavailableSection('energy');
    const { balance, dailyRefill, nextRefillAt } = e.value;
    const issues: ReadinessIssueRow[] = [];
    const perLookup = energy.unitsPerLookup;
    // Waiting only helps when a refill is scheduled and it is large enough to pay for a read.
    const refillHelps = nextRefillAt !== null && dailyRefill >= perLookup;
    const when = nextRefillAt ? ` until the refill at ${nextRefillAt.toISOString()}` : '; no refill is scheduled';
    if (perLookup > 0 && balance < perLookup) {
      issues.push(issue(ISSUE.energyExhausted, `energy is exhausted${when}; public-data reads answer 429 or null`, refillHelps));
    } else if (balance < Math.ceil(dailyRefill * ENERGY_LOW_FRACTION)) {
      issues.push(issue(ISSUE.energyLow, `energy is low (${balance} of ${dailyRefill} daily units)`, refillHelps));
    }
    return {
      state: 'complete',
      observedAt: e.observedAt,
      data: { balance, dailyRefill, nextRefillAt: nextRefillAt?.toISOString() ?? null },
      issues,
    };
  }

  async function snapshot(workspaceId: string): Promise<ReadinessOutput> {
    const asOf = clock.now().toISOString();
    const [x, m, b, e, mb, xd, ot, md, us] = await Promise.all([
      observe(() => sources.xAccounts(workspaceId)),
      observe(() => sources.messagingAccounts(workspaceId)),
      observe(() => sources.billing(workspaceId)),
      observe(() => sources.energy(workspaceId)),
      observe(() => sources.failedMailboxes(workspaceId)),
      observe(() => sources.disconnectedXAccounts(workspaceId)),
      observe(() => sources.openTasks(workspaceId)),
      observe(() => sources.mailboxDomains(workspaceId)),
      observe(() => sources.uncertainSends(workspaceId)),
    ]);
    const accounts = accountsSection(x, m, mb, xd, ot);
    if (md.ok && accounts.state !== 'unavailable') accounts.issues.push(...md.value);
    if (us.ok && accounts.state !== 'unavailable') accounts.issues.push(...uncertainIssues(us.value));
    return {
      workspaceId,
      asOf,
      accounts,
      billing: billingSection(b),
      energy: energySection(e),
      providerHealthChecked: false,
      deliveryGuaranteed: false,
      note: READINESS_NOTE,
    };
  }

  return { snapshot, overrideSource };
}

export type ReadinessService = ReturnType<typeof createReadinessService>;
