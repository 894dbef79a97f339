/**
 * Ledger entries in words for the console (the Activity page and the lead page): the spec's activity actions
 * (docs SPEC "Activity entry", src/domain/vocabulary.ts `ACTIVITY_ACTIONS`) as names a person reads, and the entry's
 * `detail` (free text or a JSON string, written by the engine, the reply decisions, the inbox pass, merges…) as one
 * line of words. Raw JSON is never shown: known keys are said in words, reason codes explained, unknown keys shown as
 * `key: value`. Keys that could hold message text or a secret are left out (the ledger should never hold them; this
 * is the second guard). Pure functions, no I/O; the results are plain text (the pages escape them with `safe`).
 */

/** One action: what the entry says when it went through, and the noun used when it was skipped or failed. */
interface ActionWords {
  done: string;
  noun: string;
}

const ACTIONS: Record<string, ActionWords> = {
  resolve: { done: 'Profile resolved', noun: 'Profile lookup' },
  invite: { done: 'Invitation sent', noun: 'Invitation' },
  accepted: { done: 'Invitation accepted', noun: 'Acceptance' },
  like: { done: 'Post liked', noun: 'Like' },
  message: { done: 'Message sent', noun: 'Message' },
  followup: { done: 'Follow-up sent', noun: 'Follow-up' },
  reply_detected: { done: 'Reply received', noun: 'Reply' },
  view_profile: { done: 'Profile viewed', noun: 'Profile view' },
  endorse: { done: 'Skill endorsed', noun: 'Endorsement' },
  comment: { done: 'Comment posted', noun: 'Comment' },
  enrich: { done: 'Lead enriched', noun: 'Enrichment' },
  meeting_invited: { done: 'Meeting invitation sent', noun: 'Meeting invitation' },
  reply_drafted: { done: 'Reply drafted', noun: 'Reply draft' },
  reply_sent: { done: 'Reply sent', noun: 'Reply' },
  reply_dismissed: { done: 'Reply dismissed', noun: 'Dismissal' },
  reply_snoozed: { done: 'Reply snoozed', noun: 'Snooze' },
  sequence_started: { done: 'Sequence started', noun: 'Sequence start' },
  meeting_booked: { done: 'Meeting booked', noun: 'Meeting booking' },
  meeting_no_show: { done: 'Meeting no-show', noun: 'No-show' },
  meeting_synced: { done: 'Meeting synced', noun: 'Meeting sync' },
  manual_override: { done: 'Changed by a person', noun: 'Manual change' },
  email_sent: { done: 'E-mail sent', noun: 'E-mail' },
  x_dm: { done: 'X message sent', noun: 'X message' },
  x_follow: { done: 'Followed on X', noun: 'X follow' },
  x_like: { done: 'Liked on X', noun: 'X like' },
  x_follow_back: { done: 'Followed back on X', noun: 'X follow-back' },
  error: { done: 'Error', noun: 'Step' },
};

/** Reason codes (the engine's skip and failure reasons, the drivers' errors, the inbox pass's) in words. */
const REASONS: Record<string, string> = {
  broken_placeholder: 'broken placeholder',
  missing_template_value: 'a placeholder has no value for this lead',
  unknown_placeholder: 'unknown placeholder',
  missing_email: 'the lead has no e-mail address',
  missing_x_user_id: 'the lead has no X account',
  empty_message: 'the step has no message text',
  rate_limited: 'rate limited by the platform; tried again later',
  interrupted: 'interrupted by a restart',
  bounced: 'the e-mail bounced',
  bounced_hard: 'the e-mail bounced (permanent)',
  daily_cap: 'daily limit reached',
  spacing: 'too soon after the previous send',
  left_company: 'the person left the company',
  identity_opted_out: 'the person opted out',
  feedback_opt_out: 'opted out through a complaint',
  billing_inactive: 'billing is not active',
  mailbox_full: "the recipient's mailbox is full",
  mailbox_disabled: "the recipient's mailbox is disabled",
  user_unknown: 'no such recipient',
  host_unknown: "the recipient's domain does not exist",
  spam_block: 'blocked as spam',
  policy: 'refused by policy',
  content: 'refused for its content',
  network: 'network error',
  timeout: 'timed out',
  unreachable: 'the server could not be reached',
  expired: 'expired',
  no_longer_applies: 'no longer applies',
  task_skipped: 'the task was skipped',
  x_dm_not_invited: 'X allows this message only after the person writes first',
  x_engage_by_person: 'done by a person on X',
  linkedin_engage_by_person: 'done by a person on LinkedIn',
  linkedin_tasks: 'LinkedIn steps are done by a person (Tasks mode)',
  by_person: 'done by a person',
  suppressed: 'the address is suppressed',
  complaints: 'too many complaints',
  bounces: 'too many bounces',
  dmarc_fail: 'DMARC check failed',
  decide_failed: 'the decision failed',
};

const KINDS: Record<string, string> = {
  connect: 'connection request',
  message: 'LinkedIn message',
  engage: 'LinkedIn engagement',
  email: 'e-mail',
  instagram_dm: 'Instagram message',
  x_dm: 'X message',
  x_engage: 'X engagement',
};

const CHANNELS: Record<string, string> = { linkedin: 'LinkedIn', email: 'e-mail', x: 'X', instagram: 'Instagram' };

const OPS: Record<string, string> = {
  merge: 'leads merged',
  not_same_person: 'marked as not the same person',
  stop: 'automation stopped',
  mailbox_paused: 'mailbox paused',
  mailbox_resumed: 'mailbox resumed',
};

/** Keys never shown: message text and anything secret-like (the ledger should not hold them). */
const HIDDEN = /^(text|message|body|draft|subject|theirMessage|html|content|secret|password|apiKey|accessToken|refreshToken|authorization|cookie)$/i;
/** Identifiers that mean nothing to a reader of the line (the entry's own columns link the lead). */
const IDS = new Set(['replyId', 'taskId', 'survivorId', 'mergedLeadId', 'otherLeadId', 'requestedLeadId', 'mailboxId', 'leadId', 'draftId']);

const MAX_VALUE = 120;

/** A code in words: the known explanation, else the code with its underscores as spaces. */
export function reasonText(code: string): string {
  return REASONS[code] ?? code.replace(/_/g, ' ');
}

/** The detail column as an object when it is a JSON object; null for free text, empty or other JSON. */
function parseDetail(detail: string | Record<string, unknown> | null | undefined): Record<string, unknown> | null {
  if (detail && typeof detail === 'object') return detail;
  if (typeof detail !== 'string') return null;
  const s = detail.trim();
  if (!s.startsWith('{')) return null;
  try {
    const v: unknown = JSON.parse(s);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function clip(s: string): string {
  return s.length > MAX_VALUE ? `${s.slice(0, MAX_VALUE - 1)}…` : s;
}

/** A value as text: scalars as they are, lists joined, objects as `key: value` pairs; never JSON. */
function valueText(v: unknown, depth = 0): string {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'string') return clip(v);
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (Array.isArray(v)) return clip(v.map((x) => valueText(x, depth + 1)).join(', '));
  if (typeof v === 'object') {
    if (depth > 1) return '…';
    const parts = Object.entries(v as Record<string, unknown>)
      .filter(([k]) => !HIDDEN.test(k))
      .map(([k, x]) => `${k}: ${valueText(x, depth + 1)}`);
    return clip(`(${parts.join(', ')})`);
  }
  return '';
}

/** An ISO timestamp as "2026-11-29 18:51 UTC"; anything else as it is. */
function timeText(v: unknown): string {
  if (typeof v !== 'string') return valueText(v);
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? clip(v) : `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * The action's name for a person: `activityLabel('invite')` → "Invitation sent". With the entry's outcome: a
 * `skipped` entry whose detail names a reason reads "Step skipped: broken placeholder", other skipped ones
 * "Invitation skipped"; a `failed` one "Invitation failed". Unknown actions come back with underscores as spaces.
 *
 * @param action the ledger's action code (the spec's activity enum; any string is accepted)
 * @param outcome `ok` (default), `skipped` or `failed`
 * @param detail the entry's detail (JSON string, free text or an object), read only for a skip's reason
 */
export function activityLabel(action: string, outcome: string = 'ok', detail?: string | Record<string, unknown> | null): string {
  const words = ACTIONS[action] ?? { done: action.charAt(0).toUpperCase() + action.slice(1).replace(/_/g, ' '), noun: 'Step' };
  if (outcome === 'skipped') {
    const reason = parseDetail(detail)?.reason;
    return typeof reason === 'string' ? `Step skipped: ${reasonText(reason)}` : `${words.noun} skipped`;
  }
  if (outcome === 'failed') return `${words.noun} failed`;
  return words.done;
}

/**
 * The entry's detail as one readable line: JSON details are said key by key (the step number counted from 1, the
 * step kind and channel in words, reason codes explained, the attempt, a retry time in UTC, the reply decision…),
 * unknown keys as `key: value`, identifiers left out; free-text details come back as they are (clipped to 500
 * characters); empty → ''. Never JSON, never message text or secret-like keys.
 *
 * @param action the ledger's action code (kept for action-specific wording)
 * @param detail the entry's `detail` column (string) or an already parsed object
 */
export function activityDetailText(action: string, detail: string | Record<string, unknown> | null | undefined): string {
  const obj = parseDetail(detail);
  if (!obj) {
    const s = typeof detail === 'string' ? detail.trim() : '';
    // A JSON array or scalar is still JSON: say what it holds, not its syntax.
    if (/^[[{"]/.test(s)) {
      try {
        return valueText(JSON.parse(s));
      } catch {
        /* free text that starts like JSON: shown as text */
      }
    }
    return s.length > 500 ? `${s.slice(0, 499)}…` : s;
  }
  const parts: string[] = [];
  const o = obj;
  const has = (k: string) => o[k] !== undefined && o[k] !== null;
  if (has('op')) parts.push(OPS[String(o.op)] ?? reasonText(String(o.op)));
  if (typeof o.step === 'number') parts.push(`step ${o.step + 1}`);
  if (has('kind')) parts.push(KINDS[String(o.kind)] ?? String(o.kind).replace(/_/g, ' '));
  if (has('channel')) parts.push(`via ${CHANNELS[String(o.channel)] ?? valueText(o.channel)}`);
  if (has('variant')) parts.push(`variant ${valueText(o.variant)}`);
  if (has('reason')) parts.push(reasonText(String(o.reason)));
  if (has('field')) parts.push(`placeholder “${valueText(o.field)}”`);
  if (has('token')) parts.push(`found “${valueText(o.token)}”`);
  if (o.in === 'subject') parts.push('in the subject');
  if (has('decision')) parts.push(`decision: ${String(o.decision).replace(/_/g, ' ')}`);
  if (has('classification')) parts.push(`classified ${String(o.classification).replace(/_/g, ' ')}`);
  if (o.edited === true) parts.push('edited before sending');
  if (typeof o.attempt === 'number') parts.push(`attempt ${o.attempt}`);
  if (o.final === true) parts.push('no further tries');
  if (has('retryAt')) parts.push(`next try ${timeText(o.retryAt)}`);
  if (has('resumeAt')) parts.push(`resumes ${timeText(o.resumeAt)}`);
  if (o.recovered === 'confirmed_sent') parts.push('confirmed sent after a restart');
  else if (has('recovered')) parts.push(`recovered: ${valueText(o.recovered)}`);
  if (o.confirmed === 'not_sent') parts.push('confirmed not sent');
  if (o.needsReview === true) parts.push('needs review');
  if (has('by')) parts.push(`by ${valueText(o.by)}`);
  if (has('via')) parts.push(`through ${valueText(o.via)}`);
  const known = new Set([
    'op',
    'step',
    'kind',
    'channel',
    'variant',
    'reason',
    'field',
    'token',
    'in',
    'decision',
    'classification',
    'edited',
    'attempt',
    'final',
    'retryAt',
    'resumeAt',
    'recovered',
    'confirmed',
    'needsReview',
    'by',
    'via',
  ]);
  for (const [k, v] of Object.entries(o)) {
    if (known.has(k) || IDS.has(k) || HIDDEN.test(k) || v === undefined) continue;
    parts.push(`${k}: ${valueText(v)}`);
  }
  void action;
  return parts.join('; ');
}
