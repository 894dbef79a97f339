import { shortHash, unitHash } from '../../lib/hash.js';
import type { ActionResult, Channel, ChannelDriver, InboundObservation, OutboundAction, Recipient } from '../types.js';

/**
 * The simulated outside world. Its answers are a pure function of the seed, the lead's world-file script and
 * the history the engine passes in, so any process (or a re-run) sees the same world. The one thing it keeps
 * is a per-process memory of the idempotency keys it accepted, so confirm() can answer after a crash.
 *
 * Script fields on a lead's (or candidate's) `sandbox` object, all optional:
 * - acceptsInviteAfterHours: number | null   hours after the invite it is accepted; null = never
 * - followsBackAfterHours: number | null     X: hours after our follow the person follows back; null = never
 * - replyAfterHours: number | null           hours after our first message they reply; null = never
 * - replyText: string                        what they write (a reply happens when this or replyAfterHours is set)
 * - laterReplies: { afterHours, text }[]     more messages, each `afterHours` after our first message (after an
 *                                            out-of-office reply, say, or once a follow-up or an answer reached them)
 * - failWith: string | { error, kinds?, retryable? }  every attempt (of those step kinds) fails with this error
 * - rateLimited: number                      the first N attempts of each step are answered "rate limited"
 * - retryAfterSeconds: number                what those answers ask for (default 3600)
 * Unscripted people follow the configured probabilities.
 */
export interface SandboxOptions {
  seed: string;
  acceptRate: number;
  acceptMaxHours: number;
  followBackRate: number;
  replyRate: number;
  replyMaxHours: number;
  failureRate: number;
}

const HOUR = 3_600_000;

const DEFAULT_REPLIES = [
  'Thanks for reaching out! Sounds interesting, can we schedule a call next week?',
  'Not interested, thanks.',
  'Interesting. What does it cost?',
  'I am out of office until Monday with limited access to email.',
  'Thanks, happy to learn more.',
  'Please remove me from your list.',
];

type Script = Record<string, unknown>;

const num = (v: unknown): number | null | undefined => (v === null ? null : typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

function delayHours(opts: SandboxOptions, leadId: string, purpose: string, scripted: number | null | undefined, rate: number, maxHours: number, force = false) {
  if (scripted === null) return null;
  if (scripted !== undefined) return scripted;
  if (!force && unitHash(opts.seed, purpose, leadId) >= rate) return null;
  return 1 + unitHash(opts.seed, `${purpose}:delay`, leadId) * Math.max(0, maxHours - 1);
}

function failure(script: Script, action: OutboundAction): ActionResult | null {
  const f = script.failWith;
  if (typeof f === 'string' && f) return { outcome: 'failed', error: f, retryable: false };
  if (f && typeof f === 'object') {
    const spec = f as { error?: unknown; kinds?: unknown; retryable?: unknown };
    const kinds = Array.isArray(spec.kinds) ? spec.kinds : null;
    if (!kinds || kinds.includes(action.kind)) {
      return { outcome: 'failed', error: typeof spec.error === 'string' ? spec.error : 'sandbox_failure', retryable: spec.retryable === true };
    }
  }
  return null;
}

/** How many idempotency keys a sandbox driver remembers for confirm(); older ones answer `unknown`. */
const REMEMBERED_SENDS = 100_000;

export function createSandboxDriver(channel: Channel, opts: SandboxOptions): ChannelDriver {
  // The simulated network's memory of what it accepted, per process: another process's sends are unknown to it,
  // so confirm() never answers `not_sent` (that could make the engine send twice).
  const sent = new Map<string, string>();
  const remember = (key: string, externalId: string) => {
    sent.set(key, externalId);
    if (sent.size > REMEMBERED_SENDS) sent.delete(sent.keys().next().value!);
  };
  return {
    channel,
    async confirm(action) {
      const externalId = sent.get(action.idempotencyKey);
      return externalId ? { status: 'sent', externalId } : { status: 'unknown' };
    },
    async perform(action) {
      const script: Script = action.recipient.sandbox ?? {};
      const failed = failure(script, action);
      if (failed) return failed;
      const limited = num(script.rateLimited);
      if (limited && (action.attempt ?? 0) < limited) return { outcome: 'rate_limited', retryAfterSeconds: num(script.retryAfterSeconds) || 3600 };
      if (channel === 'email' && !action.recipient.email) return { outcome: 'failed', error: 'no_email_address', retryable: false };
      if (channel === 'x' && !action.recipient.xUserId) return { outcome: 'failed', error: 'no_x_user_id', retryable: false };
      if (opts.failureRate > 0 && unitHash(opts.seed, 'fail', action.idempotencyKey, String(action.attempt ?? 0)) < opts.failureRate) {
        return { outcome: 'failed', error: 'sandbox_transient', retryable: true };
      }
      const externalId = `sbx_${shortHash(opts.seed, action.idempotencyKey)}`;
      remember(action.idempotencyKey, externalId);
      return { outcome: 'ok', externalId };
    },
    async observe({ leads, now }) {
      const out: InboundObservation[] = [];
      for (const lead of leads) out.push(...scriptedEvents(channel, opts, lead).filter((o) => o.at.getTime() <= now.getTime()));
      return out;
    },
    async nextObservations({ leads, now }) {
      const next = new Map<string, Date | null>();
      for (const lead of leads) {
        const later = scriptedEvents(channel, opts, lead).filter((o) => o.at.getTime() > now.getTime());
        next.set(lead.leadId, later.length === 0 ? null : new Date(Math.min(...later.map((o) => o.at.getTime()))));
      }
      return next;
    },
  };
}

/**
 * Everything the lead's script (or the configured rates) has the person do on `channel`, at its time, past or future,
 * given the history the engine passed in: `observe` reports those due, `nextObservations` the first still to come.
 */
function scriptedEvents(channel: Channel, opts: SandboxOptions, lead: Recipient): InboundObservation[] {
  const h = lead.history;
  if (!h) return [];
  const script: Script = lead.sandbox ?? {};
  const out: InboundObservation[] = [];
  const after = (from: Date, hours: number | null) => (hours === null ? null : new Date(from.getTime() + hours * HOUR));
  if (channel === 'linkedin' && h.invitedAt && !h.connectedAt) {
    const at = after(h.invitedAt, delayHours(opts, lead.leadId, 'accept', num(script.acceptsInviteAfterHours), opts.acceptRate, opts.acceptMaxHours));
    if (at) out.push({ type: 'invite_accepted', leadId: lead.leadId, at });
  }
  if (channel === 'x' && h.followedAt && !h.followedBackAt) {
    const at = after(h.followedAt, delayHours(opts, lead.leadId, 'followback', num(script.followsBackAfterHours), opts.followBackRate, opts.acceptMaxHours));
    if (at) out.push({ type: 'followed_back', leadId: lead.leadId, at });
  }
  // An inbox holds every message, old ones too: each poll reports all that are due, and the engine keeps what it
  // has not recorded yet.
  if (h.messagedAt && h.lastMessageChannel === channel) {
    const scriptedText = typeof script.replyText === 'string' ? script.replyText : null;
    const hours = delayHours(opts, lead.leadId, 'reply', num(script.replyAfterHours), opts.replyRate, opts.replyMaxHours, scriptedText !== null);
    const at = after(h.messagedAt, hours);
    if (at) {
      const text = scriptedText ?? DEFAULT_REPLIES[Math.floor(unitHash(opts.seed, 'replyText', lead.leadId) * DEFAULT_REPLIES.length)];
      out.push({ type: 'reply', leadId: lead.leadId, channel, text, at });
    }
    for (const later of Array.isArray(script.laterReplies) ? script.laterReplies : []) {
      const { afterHours, text } = (later ?? {}) as { afterHours?: unknown; text?: unknown };
      const laterAt = typeof text === 'string' ? after(h.messagedAt, num(afterHours) ?? null) : null;
      if (laterAt) out.push({ type: 'reply', leadId: lead.leadId, channel, text: text as string, at: laterAt });
    }
  }
  return out;
}
