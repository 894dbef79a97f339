import { Type } from 'typebox';
import { Nullable, OneOf, Timestamp, Uuid } from '../../app/schemas.js';
import { INBOUND_VERDICTS } from '../../channels/email/index.js';
import { SUPPRESSION_REASONS } from '../../domain/suppression.js';

// GET /mailboxes/{mailbox}/inbound, GET /suppressions, DELETE /suppressions/{address} (docs/email.md "The inbound
// record", docs/deliverability.md "The suppression list"). Every operation is an extension of the spec.

export const INBOUND_LIMIT_DEFAULT = 50;
export const INBOUND_LIMIT_MAX = 200;

const Limit = Type.Optional(
  Type.Integer({
    minimum: 1,
    maximum: INBOUND_LIMIT_MAX,
    default: INBOUND_LIMIT_DEFAULT,
    description: `page size, 1 to ${INBOUND_LIMIT_MAX} (default ${INBOUND_LIMIT_DEFAULT})`,
  }),
);
const After = Type.Optional(Type.String({ minLength: 1, maxLength: 400, description: 'the previous page’s nextCursor; omit for the first page' }));

export const Verdict = OneOf(INBOUND_VERDICTS, {
  description:
    '`reply` (a person’s reply), `out_of_office` (an automatic reply: the lead waits), `left_company` (a leaver notice: the lane stopped for ' +
    'good), `unsubscribe` (the List-Unsubscribe mailto, or a feedback report of type opt-out), `bounce` (a delivery failed for good), ' +
    '`delayed` (not final yet), `delivery_report` (a success report: nothing changes), `complaint` (a spam complaint), `unmatched` (tied ' +
    'to none of our messages or leads), `ignored` (tied, but not believed: an unthreaded auto-reply, a DMARC failure, a feedback type ' +
    'that is no complaint), `duplicate` (handled before), `unparseable` (could not be read)',
});

export const MailboxParams = Type.Object({ mailbox: Type.String({ minLength: 1, maxLength: 320, description: 'the mailbox id (mbx_…) or its address' }) });

export const InboundQuery = Type.Object({ verdict: Type.Optional(Verdict), limit: Limit, after: After }, { additionalProperties: true });

export const InboundRecord = Type.Object({
  id: Type.String({ description: '`<UIDVALIDITY>.<UID>` of the message in the mailbox’s INBOX' }),
  mailboxId: Type.String(),
  readAt: Timestamp({ description: 'when the watcher read it' }),
  receivedAt: Nullable(Timestamp({ description: 'when it arrived in the INBOX (IMAP INTERNALDATE)' })),
  messageId: Nullable(Type.String({ description: 'the sender’s Message-ID, without angle brackets' })),
  tiedTo: Nullable(
    Type.Object({
      messageId: Nullable(Type.String({ description: 'our Message-ID it answers or returns' })),
      leadId: Nullable(Uuid()),
    }),
  ),
  verdict: Verdict,
  reason: Nullable(
    Type.String({
      description:
        'why: a reply’s deciding rule (e.g. `unsubscribe.de.abmelden`), a bounce’s `hard:user_unknown`, an auto-reply’s header ' +
        '(`auto-submitted`, `subject:de`), or why nothing was applied (`no_message_of_ours`, `report_not_ours`, `auto_reply_unthreaded`, ' +
        '`dmarc_fail`, `feedback_type:not-spam`, …)',
    }),
  ),
  effect: Nullable(
    Type.String({
      description:
        'what it changed, comma-separated: `replied`, `opted_out`, `needs_review`, `snoozed`, `lane_stopped`, `lead_failed`, ' +
        '`suppressed:<reason>`, `soft_bounce:<count>`, `mailbox_paused`, `noted`, `none`, …',
    }),
  ),
  label: Nullable(Type.String({ description: 'a reply’s classification' })),
  confidence: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
  needsReview: Type.Boolean({ description: 'below the confidence floor: it waits for a person and nothing automatic happened' }),
  detail: Type.Record(Type.String(), Type.Unknown(), {
    description: 'facts without message text: a report’s status, action, severity and rule; a reply’s evidence and language',
  }),
});

export const InboundResponse = Type.Object({
  mailbox: Type.Object({ id: Type.String(), address: Type.String() }),
  items: Type.Array(InboundRecord, { description: 'newest first; no message text (the console alone shows an excerpt)' }),
  nextCursor: Nullable(Type.String({ description: 'pass as `after` for the next page; null on the last page' })),
});

export const Reason = OneOf(SUPPRESSION_REASONS, {
  description:
    '`bounced_hard` (a delivery failed for good: unknown user, no such domain, policy), `bounced_soft` (repeated final soft failures), ' +
    '`complaint` (a spam complaint), `unsubscribed` (the person’s own link, mailto or words), `opted_out` (a person of the workspace ' +
    'opted them out), `left_company` (a leaver notice)',
});

export const SuppressionsQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 320, description: 'an address prefix, or `@domain` for a whole domain' })),
    reason: Type.Optional(Reason),
    limit: Limit,
    after: After,
  },
  { additionalProperties: true },
);

export const Suppression = Type.Object({
  address: Type.String(),
  reason: Reason,
  removable: Type.Boolean({ description: 'false when it records a person asking to stop: such an address is never removed' }),
  leadId: Nullable(Uuid()),
  sourceMessageId: Nullable(Type.String({ description: 'our Message-ID whose bounce, complaint or reply caused it' })),
  suppressedAt: Timestamp(),
});

export const SuppressionsResponse = Type.Object({
  items: Type.Array(Suppression, { description: 'newest first' }),
  nextCursor: Nullable(Type.String({ description: 'pass as `after` for the next page; null on the last page' })),
});

export const SuppressionParams = Type.Object({ address: Type.String({ minLength: 3, maxLength: 320, description: 'the suppressed address (URL-encoded)' }) });

export const RemoveSuppressionBody = Type.Object(
  { by: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\x00]*$', description: 'audit-trail label (default api)' })) },
  { additionalProperties: false },
);

export const RemoveSuppressionResponse = Type.Object({
  removed: Type.Literal(true),
  address: Type.String(),
  reason: Reason,
  by: Type.String(),
});
