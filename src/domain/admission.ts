import { sql, type RawBuilder } from 'kysely';
import { effectiveBalance, effectiveBalanceSql, type EnergyRow } from './energy.js';
import { emailKey, identityOptedOutSql, leadEmailKeySql, samePerson, type IdentityKeys } from './identity.js';
import { isWithinWindow, leadZone, safeZone, type SendingWindow } from './time.js';
import type { BillingStatus, StepKind } from './vocabulary.js';

/**
 * Admission: every condition a step send must meet, in its one home, each as a TypeScript check and as the SQL
 * fragment the engine's claim (src/engine/sql/claimDue.ts) is built from, under one stable name. GET /sequences'
 * `executionBlockReason` reads the same checks (src/modules/sequences/sequences.service.ts), so "what blocks
 * sending" and what the engine does cannot disagree. The send budgets (caps, spacing) are the ledger's
 * (domain/budgets.ts), not conditions here.
 *
 * Each rule says what the claim does with a lead it stops:
 * - `hold`: the claim does not take the lead at all (a WHERE condition); it keeps its place and runs when the
 *   condition clears (a paused sequence resumed, billing restored, energy refilled, a sender connected);
 * - `stop`: the claim takes the lead and ends its sequence with one ledger entry (an opted-out person: skipped;
 *   a suppressed address: failed for good);
 * - `wait`: the claim takes the lead and moves it to when the condition clears (the next sending window).
 *
 * In every form a rule is "true: this send may go". A SQL fragment reads the claim's aliases (AdmissionSources);
 * where it is NULL (a missing LEFT JOIN row) it does not admit, as a WHERE condition reads it.
 */

/** Billing statuses that send (and run discovery); every other status holds the workspace's work. */
export const SENDING_BILLING_STATUSES = ['active', 'trialing'] as const satisfies readonly BillingStatus[];
/** Steps sent through a connected X account (no time zone: not in sending hours; no messaging account). */
export const X_STEP_KINDS = ['x_dm', 'x_engage'] as const satisfies readonly StepKind[];

export const isXStepKind = (kind: string) => (X_STEP_KINDS as readonly string[]).includes(kind);
export const billingSends = (status: string) => (SENDING_BILLING_STATUSES as readonly string[]).includes(status);
/** How a suppressed address is stored and compared (suppressed_addresses.address): its identity key. */
export const suppressionAddress = (email: string) => emailKey(email);

export type AdmissionEffect = 'hold' | 'stop' | 'wait';
/** What a rule is about: GET /sequences answers the sequence, workspace and sender ones. */
export type AdmissionScope = 'sequence' | 'workspace' | 'sender' | 'lead' | 'moment';

/** What the TypeScript checks read. */
export interface AdmissionFacts {
  sequence: {
    status: string;
    revision: number;
    approved_revision: number | null;
    /** Steps go in the lead's own sending hours when the lead has a valid time zone (absent: false). */
    send_in_lead_hours?: boolean;
  };
  workspace: EnergyRow & { x_channel_enabled: boolean };
  /** The step to send; null when the lead has none left (the claim takes it only to mark it done). */
  step: { kind: string } | null;
  sender: {
    /**
     * The messaging account the step goes through (every step but the X ones): the lead's own, else for a LinkedIn
     * step the workspace's only LinkedIn account (domain/claim-layout.ts); null without one.
     */
    account: { stored_status: string; time_zone: string | null } | null;
    /** The step's X account (the lead's own, its Play's, or the workspace's only one) is saved in the workspace. */
    xAccountSaved: boolean;
    /** The step has an X account to go through at all (absent: true). */
    xAccountNamed?: boolean;
    /** The workspace has a mailbox pool for an e-mail step of a lead without an account (absent: false). */
    mailboxPool?: boolean;
  };
  /** The lead's own facts; absent when the question is about a sequence as a whole (GET /sequences). */
  lead?: {
    automation_stopped: boolean;
    opted_out_at: Date | null;
    snoozed_until: Date | null;
    inflight_key: string | null;
    email: string | null;
    linkedin_url: string | null;
    x_user_id: string | null;
    /** The person's IANA time zone (absent or null: unknown). */
    time_zone?: string | null;
    /** What the lead waits for at its step; 'branch': its next step is chosen by its edges (absent: nothing). */
    waiting_for?: string | null;
  };
  /** The workspace's opt-outs and suppressions, for the lead rules. */
  people?: {
    /** Some lead of this person (domain/identity.ts) opted out. */
    optedOut(person: IdentityKeys): boolean;
    /** The address (as `suppressionAddress` writes it) is on the suppression list. */
    suppressed(address: string): boolean;
  };
}

export interface AdmissionContext {
  now: Date;
  /** Energy one send costs (OUTREACH_ENGINE_UNITS_PER_ACTION). */
  unitsPerAction: number;
  /** The engine's sending hours and days, in each step's sending zone (`sendingZone`). */
  sendingWindow: SendingWindow;
}

/** The claim's aliases: `leads`, `sequences`, `workspaces`, the LEFT JOINed `messaging_accounts`, and the step. */
export interface AdmissionSources {
  lead: string;
  sequence: string;
  workspace: string;
  account: string;
  /** The step's kind; NULL when there is none. */
  stepKind: RawBuilder<string | null>;
  /** True when the lead has no step left. */
  noStep: RawBuilder<boolean>;
  /** The X account the step would send from. */
  xAccount: RawBuilder<string | null>;
  /** The lead's workspace has a mailbox pool (domain/claim-layout.ts `mailboxPoolSql`). */
  mailboxPool: RawBuilder<boolean>;
}

export interface AdmissionRule {
  name: AdmissionRuleName;
  effect: AdmissionEffect;
  scope: AdmissionScope;
  /** The condition in words (docs/engine.md). */
  means: string;
  /** What a person does to release a lead this rule holds or stops, in words (a lead's `heldBy.fix`). */
  release: string;
  admits(f: AdmissionFacts, ctx: AdmissionContext): boolean;
  sql(src: AdmissionSources, ctx: AdmissionContext): RawBuilder<boolean>;
}

export const ADMISSION_RULE_NAMES = [
  'sequence_not_active',
  'sequence_not_approved',
  'billing_inactive',
  'energy_exhausted',
  'x_channel_disabled',
  'no_sender_for_channel',
  'sender_not_connected',
  'lead_stopped',
  'lead_snoozed',
  'lead_opted_out',
  'identity_opted_out',
  'address_suppressed',
  'outside_sending_hours',
] as const;
export type AdmissionRuleName = (typeof ADMISSION_RULE_NAMES)[number];

const ref = (alias: string, column: string) => sql.ref(`${alias}.${column}`);
const list = (values: readonly string[]) => sql.join(values.map((v) => sql`${v}::text`));
const isXSql = (src: AdmissionSources) => sql<boolean>`${src.stepKind} IN (${list(X_STEP_KINDS)})`;

/** `SENDING_BILLING_STATUSES` over the workspaces row aliased `alias`. */
export function billingSendsSql(alias: string): RawBuilder<boolean> {
  return sql<boolean>`${ref(alias, 'billing_status')} IN (${list(SENDING_BILLING_STATUSES)})`;
}

/**
 * `isWithinWindow` (domain/time.ts) in SQL, for the zone `zone`: the local weekday is in the window's day mask and
 * the local minute in [hoursStart, hoursEnd). PostgreSQL's zone database answers where the TypeScript form asks Intl;
 * an unknown zone raises here where `safeZone` paces it in UTC, so the claim applies the TypeScript form.
 */
export function withinSendingHoursSql(zone: RawBuilder<string>, now: Date, w: SendingWindow): RawBuilder<boolean> {
  const local = sql`(${now.toISOString()}::timestamptz AT TIME ZONE ${zone})`;
  const minute = sql`(EXTRACT(HOUR FROM ${local})::int * 60 + EXTRACT(MINUTE FROM ${local})::int)`;
  return sql<boolean>`((${w.days}::int & (1 << EXTRACT(DOW FROM ${local})::int)) <> 0
    AND ${minute} >= ${w.hoursStart}::int AND ${minute} < ${w.hoursEnd}::int)`;
}

/** What decides the zone a step's sending hours are read in. */
export interface SendingZoneFacts {
  /** The lead's messaging account's zone (null without an account or a zone). */
  accountTimeZone: string | null;
  /** The lead's own zone (domain/time.ts `leadZone` tells whether it counts). */
  leadTimeZone?: string | null;
  /** The lead's sequence sends in the lead's hours (sequences.send_in_lead_hours). */
  sendInLeadHours?: boolean;
}

/**
 * The zone a step's sending hours and days are read in: the lead's own when its sequence sends in the lead's hours and
 * the lead has a valid IANA zone (an unknown or malformed name counts as none), else its messaging account's (an
 * unknown account zone paces in UTC, `safeZone`). The retry time of a step outside its hours uses the same zone
 * (engine/pacing.ts `sendingWindowRetryAt`); the account's daily caps keep counting in the account's own day.
 */
export function sendingZone(f: SendingZoneFacts): string {
  const lead = f.sendInLeadHours ? leadZone(f.leadTimeZone) : null;
  return lead ?? safeZone(f.accountTimeZone);
}

/**
 * `sendingZone` in SQL, over the claim's aliases. A lead zone counts when PostgreSQL's zone database knows the name
 * (compared without case, as PostgreSQL reads zone names) and it has the shape of an IANA name; the account's zone
 * reads as `withinSendingHoursSql` always read it.
 */
export function sendingZoneSql(src: Pick<AdmissionSources, 'lead' | 'sequence' | 'account'>): RawBuilder<string> {
  const leadTz = ref(src.lead, 'time_zone');
  return sql<string>`(CASE WHEN ${ref(src.sequence, 'send_in_lead_hours')} AND ${leadTz} ~ ${LEAD_ZONE_SHAPE_SQL}
      AND lower(${leadTz}) IN (SELECT lower(tz.name) FROM pg_timezone_names tz)
    THEN ${leadTz} ELSE COALESCE(NULLIF(${ref(src.account, 'time_zone')}, ''), 'UTC') END)`;
}
/** domain/time.ts `LEAD_ZONE_SHAPE` as a PostgreSQL regular expression (the same pattern). */
const LEAD_ZONE_SHAPE_SQL = '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$';

/**
 * The `outside_sending_hours` rule's check on its own, for the claim, which applies it after its SQL (an X step has
 * no time zone and is not in sending hours; every other step goes inside the hours in its `sendingZone`).
 */
export function sendsAtThisHour(f: { step: { kind: string } | null } & SendingZoneFacts, c: Pick<AdmissionContext, 'now' | 'sendingWindow'>): boolean {
  return !f.step || isXStepKind(f.step.kind) || isWithinWindow(c.now, sendingZone(f), c.sendingWindow);
}

const rules: AdmissionRule[] = [
  {
    name: 'sequence_not_active',
    effect: 'hold',
    scope: 'sequence',
    means: "the lead's sequence is `active` (a paused, draft or archived one sends nothing)",
    release: 'activate the sequence (resume it, or activate the draft once approved)',
    admits: (f) => f.sequence.status === 'active',
    sql: (s) => sql<boolean>`${ref(s.sequence, 'status')} = 'active'`,
  },
  {
    name: 'sequence_not_approved',
    effect: 'hold',
    scope: 'sequence',
    means: 'the sequence revision that would send is the approved one (`approved_revision = revision`)',
    release: "approve the sequence's current revision",
    admits: (f) => f.sequence.approved_revision !== null && f.sequence.approved_revision === f.sequence.revision,
    sql: (s) => sql<boolean>`${ref(s.sequence, 'approved_revision')} = ${ref(s.sequence, 'revision')}`,
  },
  {
    name: 'billing_inactive',
    effect: 'hold',
    scope: 'workspace',
    means: `workspace billing is ${SENDING_BILLING_STATUSES.join(' or ')}`,
    release: "restore the workspace's billing",
    admits: (f) => billingSends(f.workspace.billing_status),
    sql: (s) => billingSendsSql(s.workspace),
  },
  {
    name: 'energy_exhausted',
    effect: 'hold',
    scope: 'workspace',
    means:
      "the workspace can afford one send (the refill owed today included); a crashed send's check was paid at its claim, and a lead waiting at a branch is due only to take an edge, which spends nothing",
    release: "wait for the daily energy refill (00:00 UTC), or raise the workspace's energy",
    admits: (f, c) => (f.lead?.inflight_key ?? null) !== null || f.lead?.waiting_for === 'branch' || effectiveBalance(f.workspace, c.now) >= c.unitsPerAction,
    sql: (s, c) =>
      sql<boolean>`(${ref(s.lead, 'inflight_key')} IS NOT NULL OR ${ref(s.lead, 'waiting_for')} IS NOT DISTINCT FROM 'branch' OR ${effectiveBalanceSql(s.workspace, c.now)} >= ${c.unitsPerAction}::int)`,
  },
  {
    name: 'x_channel_disabled',
    effect: 'hold',
    scope: 'sender',
    means: "an X step needs the workspace's X channel switched on",
    release: "switch on the workspace's X channel",
    admits: (f) => !f.step || !isXStepKind(f.step.kind) || f.workspace.x_channel_enabled,
    sql: (s) => sql<boolean>`(${s.noStep} OR CASE WHEN ${isXSql(s)} THEN ${ref(s.workspace, 'x_channel_enabled')} ELSE true END)`,
  },
  {
    name: 'no_sender_for_channel',
    effect: 'hold',
    scope: 'sender',
    means:
      "the step has a sender on its channel: the lead's own account, else the mailbox pool for an e-mail step, the workspace's only LinkedIn account for a LinkedIn step, the Play's or the workspace's only X account for an X step",
    release: 'give the lead an account on this channel, or add one (a mailbox for e-mail) to the workspace',
    admits: (f) =>
      !f.step ||
      (isXStepKind(f.step.kind) ? f.sender.xAccountNamed !== false : f.sender.account !== null || (f.step.kind === 'email' && f.sender.mailboxPool === true)),
    sql: (s) => sql<boolean>`(${s.noStep} OR CASE WHEN ${isXSql(s)} THEN ${s.xAccount} IS NOT NULL
      WHEN ${s.stepKind} = 'email' THEN (${ref(s.account, 'id')} IS NOT NULL OR ${s.mailboxPool})
      ELSE ${ref(s.account, 'id')} IS NOT NULL END)`,
  },
  {
    name: 'sender_not_connected',
    effect: 'hold',
    scope: 'sender',
    means: "the step's sender is usable: an X account saved in the workspace for an X step; for every other step its messaging account connected",
    release: "reconnect the lead's account, or move the lead to a connected one",
    admits: (f) =>
      !f.step ||
      (isXStepKind(f.step.kind)
        ? f.sender.xAccountNamed === false || f.sender.xAccountSaved
        : f.sender.account === null || f.sender.account.stored_status === 'connected'),
    sql: (s) => sql<boolean>`(${s.noStep} OR CASE WHEN ${isXSql(s)}
      THEN (${s.xAccount} IS NULL OR EXISTS (SELECT 1 FROM x_accounts xa WHERE xa.workspace_id = ${ref(s.lead, 'workspace_id')} AND xa.user_id = ${s.xAccount}))
      ELSE (${ref(s.account, 'id')} IS NULL OR ${ref(s.account, 'stored_status')} = 'connected') END)`,
  },
  {
    name: 'lead_stopped',
    effect: 'hold',
    scope: 'lead',
    means:
      "the lead's automation is not stopped: a reply freezes it (only a reply decision's follow-up sequence starts it again), as do a stop and the end of its sequence",
    release: "decide the lead's reply (a follow-up sequence starts it again); a finished or stopped lead stays stopped",
    admits: (f) => !f.lead || !f.lead.automation_stopped,
    // Written as the partial index leads_due's predicate, so the claim's plan keeps using it.
    sql: (s) => sql<boolean>`${ref(s.lead, 'automation_stopped')} = false`,
  },
  {
    name: 'lead_snoozed',
    effect: 'hold',
    scope: 'lead',
    means: 'the lead is not snoozed (a reply decision or an out-of-office auto-reply)',
    release: 'wait until the snooze ends',
    admits: (f, c) => !f.lead?.snoozed_until || new Date(f.lead.snoozed_until).getTime() <= c.now.getTime(),
    sql: (s, c) => sql<boolean>`(${ref(s.lead, 'snoozed_until')} IS NULL OR ${ref(s.lead, 'snoozed_until')} <= ${c.now.toISOString()}::timestamptz)`,
  },
  {
    name: 'lead_opted_out',
    effect: 'hold',
    scope: 'lead',
    means: 'the lead itself has not opted out',
    release: 'nothing: a person who asked to stop is never contacted again',
    admits: (f) => !f.lead || f.lead.opted_out_at === null,
    sql: (s) => sql<boolean>`${ref(s.lead, 'opted_out_at')} IS NULL`,
  },
  {
    name: 'identity_opted_out',
    effect: 'stop',
    scope: 'lead',
    means: 'the person has not opted out through any of their leads (same e-mail, LinkedIn profile, X user id or handle)',
    release: 'nothing: a person who asked to stop is never contacted again',
    admits: (f) => !f.lead || !f.people || !f.people.optedOut({ email: f.lead.email, linkedinUrl: f.lead.linkedin_url, xUserId: f.lead.x_user_id }),
    sql: (s) => sql<boolean>`NOT ${identityOptedOutSql(s.lead)}`,
  },
  {
    name: 'address_suppressed',
    effect: 'stop',
    scope: 'lead',
    means: "an e-mail step's address is not suppressed in the workspace (it bounced or unsubscribed)",
    release: 'nothing from here: a bounced or unsubscribed address is not written to again (an admin may lift a wrong suppression)',
    admits: (f) => f.step?.kind !== 'email' || !f.lead?.email || !f.people || !f.people.suppressed(suppressionAddress(f.lead.email)),
    sql: (s) => sql<boolean>`CASE WHEN ${s.stepKind} = 'email' AND ${ref(s.lead, 'email')} IS NOT NULL
      THEN NOT EXISTS (SELECT 1 FROM suppressed_addresses sa WHERE sa.workspace_id = ${ref(s.lead, 'workspace_id')}
        AND sa.address = ${leadEmailKeySql(ref(s.lead, 'id'))})
      ELSE true END`,
  },
  {
    name: 'outside_sending_hours',
    effect: 'wait',
    scope: 'moment',
    means:
      "a step sent through a messaging account goes inside the sending hours and days, in the lead's own time zone when its sequence sends in the lead's hours and the lead has a valid one, else in the account's",
    release: 'wait for the sending hours',
    admits: (f, c) =>
      sendsAtThisHour(
        {
          step: f.step,
          accountTimeZone: f.sender.account?.time_zone ?? null,
          leadTimeZone: f.lead?.time_zone ?? null,
          sendInLeadHours: f.sequence.send_in_lead_hours === true,
        },
        c,
      ),
    sql: (s, c) => sql<boolean>`(${s.noStep} OR CASE WHEN ${isXSql(s)} THEN true
      ELSE ${withinSendingHoursSql(sendingZoneSql(s), c.now, c.sendingWindow)} END)`,
  },
];

/** Every rule, in the order above (the order GET /sequences and docs/engine.md name them). */
export const ADMISSION_RULES: readonly AdmissionRule[] = rules;

const byName = new Map(rules.map((r) => [r.name, r]));
export function admissionRule(name: AdmissionRuleName): AdmissionRule {
  return byName.get(name)!;
}

/** The rules that stop this send, in list order (only those `which` picks, when given). */
export function blockingRules(f: AdmissionFacts, ctx: AdmissionContext, which: (r: AdmissionRule) => boolean = () => true): AdmissionRuleName[] {
  return rules.filter((r) => which(r) && !r.admits(f, ctx)).map((r) => r.name);
}

/** The claim's WHERE: every `hold` rule, ANDed. */
export function admissionHoldSql(src: AdmissionSources, ctx: AdmissionContext): RawBuilder<boolean> {
  return sql<boolean>`${sql.join(
    rules.filter((r) => r.effect === 'hold').map((r) => sql`${r.sql(src, ctx)}`),
    sql`\n      AND `,
  )}`;
}

/** A `stop` or `wait` rule as a column the claim selects: true when it stops the send. */
export function admissionBlocksSql(name: AdmissionRuleName, src: AdmissionSources, ctx: AdmissionContext): RawBuilder<boolean> {
  return sql<boolean>`(NOT COALESCE(${admissionRule(name).sql(src, ctx)}, false))`;
}

/** A person lookup over opted-out leads' identity keys, for `AdmissionFacts.people` (domain/identity.ts decides). */
export function optedOutAmong(optedOut: IdentityKeys[]): (person: IdentityKeys) => boolean {
  return (person) => optedOut.some((o) => samePerson(o, person));
}
