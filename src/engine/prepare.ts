import type { ClaimedRow } from './sql/rows.js';
import type { StepDetail } from '../domain/ledger.js';
import type { ChannelDescriptor } from '../channels/descriptor.js';
import { recipientOf } from '../channels/recipients.js';
import { isMessageStep, sendsAsAccountUser, type Step } from './steps.js';
import { renderTemplate, type RenderResult } from '../domain/templates.js';
import type { Sender } from '../domain/budgets.js';
import { pickVariant } from './variants.js';
import type { PacingRelease } from './pacing.js';
import type { OutboundAction } from '../channels/types.js';

// The send a claimed lead's step makes (engine/outcomes.ts decides what becomes of it): its text rendered for the
// lead, its A/B arm picked, its idempotency key, or why it cannot go. No I/O.

type Row = ClaimedRow;

export interface PlannedSend {
  row: Row;
  step: Step;
  key: string;
  variantKey: string | null;
  units: number;
  release: PacingRelease | null;
  action: OutboundAction;
  /** The step's channel (channels/descriptor.ts). */
  channel: ChannelDescriptor;
}

/**
 * Why a step's text cannot go to this lead, for the skipped step's ledger detail: `missing_template_value` and
 * `unknown_placeholder` name the `field`; `broken_placeholder` (issue 39 §3: text still holding another tool's
 * placeholder, an unclosed one, or one brought in by the lead's data) also names the `token`. The step is skipped, never
 * sent with it, like a missing value (claim.ts records every refusal of prepareSend as a skipped step; the tasks of
 * docs/tasks.md are for steps a platform keeps from the engine, and would carry the same broken text).
 */
function renderFailure(r: Exclude<RenderResult, { ok: true }>): Pick<StepDetail, 'reason' | 'field' | 'token'> {
  return r.reason === 'broken_placeholder' ? { reason: r.reason, field: r.field, token: r.token } : { reason: r.reason, field: r.field };
}

/** The sender a claimed lead's step goes out through (domain/budgets.ts Sender). */
export function senderOf(row: Row): Sender {
  return {
    workspaceId: row.workspace_id,
    accountId: row.account_id,
    accountUserId: row.x_account_user_id,
    timeZone: row.time_zone,
    warmupStartedAt: row.warmup_started_at ? new Date(row.warmup_started_at) : null,
    delivery: row.delivery,
  };
}

/** The send this step makes for the lead (templates rendered, variant picked), or why it is skipped. */
export function prepareSend(
  ch: ChannelDescriptor,
  row: Row,
  step: Step,
  now: Date,
): { ok: true; send: Omit<PlannedSend, 'units' | 'release'> } | { ok: false; detail: StepDetail } {
  const base = { step: row.current_step, kind: step.kind };
  const recipient = recipientOf(row);
  const missing = ch.missingAddress?.(recipient) ?? null;
  if (missing) return { ok: false, detail: { ...base, reason: missing } };
  const fields = {
    person: row.person,
    company: row.company,
    title: row.title,
    email: row.email,
    username: row.username,
    linkedinUrl: row.linkedin_url,
    custom: row.custom,
  };
  let variantKey: string | null = null;
  let template = step.message ?? null;
  if (Array.isArray(step.variants) && step.variants.length > 0) {
    const v = pickVariant(step.variants, row.id, row.sequence_id, row.variant_key);
    if (v) {
      variantKey = v.key;
      template = v.messageTmpl;
    }
  }
  if (isMessageStep(ch, step) && !template?.trim()) return { ok: false, detail: { ...base, reason: 'empty_message' } };
  let text: string | null = null;
  if (template) {
    const r = renderTemplate(template, fields);
    if (!r.ok) return { ok: false, detail: { ...base, ...renderFailure(r), ...(variantKey && { variant: variantKey }) } };
    text = r.text;
  }
  let subject: string | null = null;
  if (ch.subject && step.subject) {
    const r = renderTemplate(step.subject, fields);
    if (!r.ok) return { ok: false, detail: { ...base, ...renderFailure(r), in: 'subject' } };
    subject = r.text;
  }
  // Per lead, sequence and step: a follow-up sequence's step 0 is a new action, not a repeat of the first sequence's.
  const key = `${row.id}:${row.sequence_id}:${row.current_step}`;
  const asUser = sendsAsAccountUser(ch);
  return {
    ok: true,
    send: {
      row,
      step,
      key,
      variantKey,
      channel: ch,
      action: {
        workspaceId: row.workspace_id,
        accountId: asUser ? null : row.account_id,
        accountUserId: asUser ? row.x_account_user_id : null,
        kind: step.kind,
        channel: ch.channel,
        recipient,
        subject,
        text,
        actions: Array.isArray(step.actions) ? step.actions : [],
        idempotencyKey: key,
        at: now,
        // Every try of this step so far, waits included (the sandbox's scripted rate limits count them).
        attempt: row.step_attempts + row.step_waits,
      },
    },
  };
}
