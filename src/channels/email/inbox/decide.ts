import type { ParsedMail } from 'mailparser';
import { classifyReplyText, type ReplyVerdict } from '../../../domain/classify.js';
import { emailKey } from '../../../domain/identity.js';
import type { Database } from '../../../db/database.js';
import type { TextCipher } from '../../../lib/crypto.js';
import { readUnsubscribeToken } from '../send/unsubscribe-token.js';
import * as repo from './inbox.repository.js';
import { dmarcFailed, normalizeMessageId, parseMessage, replyWords, type InboundHead } from './parse.js';
import { mayBeReport, readReport, type ReportHints, type ReportVerdict } from './reports.js';
import { FEEDBACK_TYPE_RULES } from './report-rules.js';
import { trustedAuthservIds } from './inbox-rules.js';
import { EXCERPT_CHARS, type Tie, type Verdict } from './verdict.js';
import { calendarReplyOf, mayCarryCalendar } from './calendar-reply.js';

/** One INBOX message as the watcher fetched it: its header fields, its structure's part types, and its body on demand. */
export interface InboundMessage {
  head: InboundHead;
  /** MIME types of every part (IMAP BODYSTRUCTURE), lower case. */
  partTypes: string[];
  /** The body (at most the configured bytes), or `unparseable` when it cannot be had (too many parts, a refused fetch). */
  read(): Promise<Buffer | 'unparseable'>;
}

export interface Decision {
  verdict: Verdict;
  /** At most EXCERPT_CHARS of the person's own words or a report's diagnostic, plain (the watcher encrypts it). */
  excerpt: string | null;
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** One address however it is spelled (case, spaces, an IDN domain in Unicode or ASCII, a final dot): domain/identity.ts. */
const sameAddress = (a: string | null, b: string | null) => !!a && !!b && emailKey(a) === emailKey(b);

const clip = (s: string | null | undefined) => (s ? s.replace(/\s+/g, ' ').trim().slice(0, EXCERPT_CHARS) || null : null);

/**
 * The rules of docs/email.md "How a message is matched", as one function that reads and writes nothing but reads:
 * only what is tied to our own mail changes anything. Each message is read (at most once) and classified once.
 *
 * 1. A delivery report or a complaint (reports.ts: by type, structure, sender and returned headers, never by an
 *    English subject) counts only when it names a Message-ID we sent; who it is about comes from our record. An
 *    answer to our calendar invitation (an iTIP REPLY, calendar-reply.ts) is one too, tied later by its UID alone.
 * 2. The List-Unsubscribe mailto with a valid token of this workspace.
 * 3. Anything else is matched to a lead by its thread (In-Reply-To, References) or, failing that, by the sender's
 *    address; an automatic message counts only when threaded to our message and not failing DMARC.
 * 4. A reply is made text (reply-text.ts) and classified (domain/classify.ts) with its headers' and subject's help.
 */
export async function decide(deps: { db: Database; cipher: TextCipher; mailbox: repo.PollMailbox }, msg: InboundMessage): Promise<Decision> {
  const { db, cipher, mailbox: mb } = deps;
  const { head } = msg;
  const dmarcFail = mb.imapUrl ? dmarcFailed(head.authResults, trustedAuthservIds(mb.imapUrl, mb.trustedAuthservId)) : false;
  // In-Reply-To names the message answered; References, newest last, the thread before it.
  const threadIds = [...new Set([...head.inReplyTo, ...[...head.references].reverse()])];
  const byThread = await repo.sentMessageByIds(db, mb.workspaceId, threadIds);
  const sentTo = (byThread?.recipient ?? byThread?.email)?.trim().toLowerCase() ?? null;
  const hints: ReportHints = {
    from: head.from,
    fromName: head.fromName,
    returnPath: head.returnPath,
    subject: head.subject,
    autoSubmitted: head.autoSubmitted,
    failedRecipients: head.failedRecipients,
    contentType: head.contentType,
    reportType: head.reportType,
    partTypes: msg.partTypes,
  };

  // The body, read and parsed at most once.
  let parsed: { mail: ParsedMail; source: Buffer } | 'unparseable' | null = null;
  const body = async () => {
    if (parsed) return parsed;
    const source = await msg.read();
    if (source === 'unparseable') return (parsed = 'unparseable');
    try {
      parsed = { mail: await parseMessage(source), source };
    } catch {
      parsed = 'unparseable';
    }
    return parsed;
  };

  // 1. Reports and complaints.
  let report: ReportVerdict | null = null;
  if (head.report || head.complaint || mayBeReport(hints)) {
    const b = await body();
    if (b === 'unparseable') return { verdict: { kind: 'unparseable', reason: 'body' }, excerpt: null };
    report = readReport(b.mail, b.source, { ...hints, sentTo });
    if (report) return reportDecision(report);
  }

  const calendar = mayCarryCalendar(msg.partTypes, head.contentType) ? await calendarDecision(body, dmarcFail) : null;
  if (calendar) return calendar;
  // 2. The List-Unsubscribe mailto: a valid token of this workspace is the capability, as the /u link's is.
  let tokenLead: { id: string; email: string | null } | null = null;
  if (head.asksUnsubscribe) {
    for (const token of head.unsubscribeTokens) {
      const named = readUnsubscribeToken(cipher, token);
      if (named && named.workspaceId === mb.workspaceId) tokenLead = await repo.leadOfWorkspace(db, mb.workspaceId, named.leadId);
      if (tokenLead) break;
    }
  }
  const fromUs = !head.from || head.from === mb.address.toLowerCase();
  const leadId = tokenLead?.id ?? byThread?.leadId ?? (fromUs ? null : await repo.contactedLeadByAddress(db, mb.workspaceId, head.from!, mb.id));
  if (!leadId)
    return { verdict: { kind: 'unmatched', reason: fromUs ? 'from_us' : threadIds.length > 0 ? 'no_message_of_ours' : 'unknown_sender' }, excerpt: null };
  const tie: Tie = {
    leadId,
    ourMessageId: byThread && byThread.leadId === leadId ? byThread.messageId : null,
    mailboxId: byThread && byThread.leadId === leadId ? byThread.mailboxId : null,
    sentTo: byThread && byThread.leadId === leadId ? sentTo : (tokenLead?.email?.trim().toLowerCase() ?? null),
    by: tokenLead ? 'token' : byThread ? 'thread' : 'address',
  };
  // Threaded to a message we sent to the very address that answers (opt-out by reply text needs it).
  const tiedToOurMessage = !!byThread && byThread.leadId === leadId && sameAddress(sentTo, head.from) && !dmarcFail;

  if (tokenLead && !dmarcFail) return { verdict: { kind: 'unsubscribe', tie, reason: 'mailto_token' }, excerpt: null };
  // An automatic message counts only when threaded to our message, and when the provider does not say it is forged.
  if (head.autoReply && (!byThread || dmarcFail))
    return { verdict: { kind: 'ignored', reason: dmarcFail ? 'dmarc_fail' : 'auto_reply_unthreaded', tie }, excerpt: null };

  const b = await body();
  if (b === 'unparseable') return { verdict: { kind: 'unparseable', reason: 'body', tie }, excerpt: null };
  // A message not yet asked: a gateway's error written as a threaded reply is still a bounce. From the very address
  // we wrote to, text alone never makes one (reports.ts), and its shape was asked above: the scan is skipped.
  if (!report && !sameAddress(head.from, sentTo)) {
    report = readReport(b.mail, b.source, { ...hints, sentTo });
    if (report) return reportDecision(report);
  }
  // Each step's CPU on a large message runs in its own turn of the event loop (docs/email.md "Bounded work").
  await yieldToLoop();
  let text = replyWords(b.mail);
  // "unsubscribe" without a valid token (or failing DMARC) is a reply that asks to stop: the subject is part of what
  // it says. (A token in it is not kept: it is a capability, and the reply is shown to people.)
  if (head.asksUnsubscribe && !/\bunsubscribe\b/i.test(text)) text = [head.subject.replace(/[A-Za-z0-9_-]{64}/g, '').trim(), text].filter(Boolean).join('\n\n');
  await yieldToLoop();
  const classification = withoutOwnAddresses(classifyReplyText(text, { subject: head.subject, autoReply: head.autoReply }), [mb.address, sentTo, head.from]);
  const excerpt = clip(text);
  const evidence = classification.evidence[0]?.rule ?? 'no_rule';

  if (head.autoReply) {
    // Automatic by its headers or subject: an out-of-office (snooze), or a leaver notice (the lane stops).
    const kind = classification.label === 'left_company' && !classification.needsReview ? 'left_company' : 'out_of_office';
    const asAuto: ReplyVerdict = kind === 'left_company' ? classification : { ...classification, label: 'out_of_office', needsReview: false };
    return {
      verdict: { kind, tie, text, classification: asAuto, tiedToOurMessage, reason: `${head.autoReplyBy}${kind === 'left_company' ? `+${evidence}` : ''}` },
      excerpt,
    };
  }
  // Text that reads as automatic must be tied like the headers' kind, or it changes nothing.
  if ((classification.label === 'out_of_office' || classification.label === 'left_company') && !classification.needsReview) {
    if (!byThread || dmarcFail)
      return { verdict: { kind: 'ignored', reason: dmarcFail ? 'dmarc_fail' : 'auto_reply_unthreaded', tie, classification }, excerpt };
    return { verdict: { kind: classification.label, tie, text, classification, tiedToOurMessage, reason: evidence }, excerpt };
  }
  return { verdict: { kind: 'reply', tie, text, classification, tiedToOurMessage, reason: evidence }, excerpt };

  /** A report's verdict, tied to the message of ours it names (the returned message first, then its thread). */
  async function reportDecision(r: ReportVerdict): Promise<Decision> {
    const excerpt = r.kind === 'bounce' ? clip(r.diagnostic) : null;
    const reason = r.kind === 'bounce' ? `${r.severity}:${r.reason}` : r.kind === 'complaint' ? `${r.format}:${r.feedbackType}` : (r.action ?? r.kind);
    if (r.kind === 'delivered') return { verdict: { kind: 'delivery_report', tie: null, report: r, reason }, excerpt };
    // A complaint counts only by the message it returns (docs/deliverability.md): a Message-ID only in its own
    // In-Reply-To or References is not enough. A bounce may be tied by its thread too (a gateway's "Re:").
    const ids = [...new Set([...(r.originalMessageId ? [r.originalMessageId] : []), ...(r.kind === 'complaint' ? [] : threadIds)])];
    const ours = await repo.sentMessageByIds(db, mb.workspaceId, ids);
    if (!ours) return { verdict: { kind: 'unmatched', reason: 'report_not_ours', report: r }, excerpt: null };
    const tie: Tie = {
      leadId: ours.leadId,
      ourMessageId: ours.messageId,
      mailboxId: ours.mailboxId,
      sentTo: (ours.recipient ?? ours.email)?.trim().toLowerCase() ?? null,
      by: r.originalMessageId && normalizeMessageId(ours.messageId) === r.originalMessageId ? 'returned_message' : 'thread',
    };
    if (dmarcFail) return { verdict: { kind: 'ignored', reason: 'dmarc_fail', tie, report: r }, excerpt };
    if (r.kind === 'complaint') {
      if (r.optOut) return { verdict: { kind: 'unsubscribe', tie, reason: 'feedback_opt_out' }, excerpt };
      if (!FEEDBACK_TYPE_RULES[r.feedbackType]?.complaint)
        return { verdict: { kind: 'ignored', reason: `feedback_type:${r.feedbackType}`.slice(0, 60), tie, report: r }, excerpt };
      return { verdict: { kind: 'complaint', tie, report: r, reason }, excerpt };
    }
    return { verdict: { kind: r.kind, tie, report: r, reason }, excerpt };
  }
}

/**
 * Step 1b of decide: an answer to our calendar invitation (an iTIP REPLY, often unthreaded) is never a reply for a
 * person; it is tied to us by its UID alone when applied (docs/meetings.md "Invitations"), and one that fails DMARC is
 * not believed. Null when the message carries none (then it is read as any other).
 */
async function calendarDecision(body: () => Promise<{ mail: ParsedMail } | 'unparseable'>, dmarcFail: boolean): Promise<Decision | null> {
  const b = await body();
  const answer = b === 'unparseable' ? null : calendarReplyOf(b.mail);
  if (!answer) return null;
  if (dmarcFail) return { verdict: { kind: 'ignored', reason: 'dmarc_fail' }, excerpt: null };
  return { verdict: { kind: 'meeting_response', answer, reason: `ical_reply:${answer.attendees[0].response}` }, excerpt: null };
}

/**
 * A leaver notice's replacement never names our mailbox or the address that left (a quote the cut missed, a
 * signature): only someone else is worth a person's task.
 */
function withoutOwnAddresses(v: ReplyVerdict, own: (string | null)[]): ReplyVerdict {
  if (!v.replacement) return v;
  const mine = new Set(own.filter((a): a is string => !!a).map((a) => a.toLowerCase()));
  const addresses = v.replacement.addresses.filter((a) => !mine.has(a.toLowerCase()));
  return { ...v, replacement: addresses.length + v.replacement.names.length > 0 ? { ...v.replacement, addresses } : null };
}
