// The rules reports.ts reads delivery reports and complaints by, as data: who sends reports, what the mail systems
// and the languages write in them, and what a status or a diagnostic means. Every pattern here is a plain, lower-case
// substring (matched with `includes` on lower-cased text, so nothing backtracks) or a fixed status prefix; a test
// walks each table and hits every entry (test/email/reports.test.ts). References: RFC 3463 (enhanced status codes),
// RFC 3464 (DSN), RFC 5965 (ARF), Sisimai's reason categories (https://libsisimai.org/en/reason/) and its test corpus
// (github.com/sisimai/set-of-emails, BSD-2-Clause), from which the mail-system phrases were taken.

/** The local parts of the addresses reports come from (`MAILER-DAEMON@host`, `postmaster@host`, …), lower case. */
export const REPORT_SENDER_LOCALPARTS: readonly string[] = [
  'mailer-daemon',
  'mailer_daemon',
  'mailerdaemon',
  'mail-daemon',
  'maildaemon',
  'postmaster',
  'post_master',
  'post-master',
  'mailadmin',
  'mail-delivery-subsystem',
];

/**
 * Display names of report senders, compared whole (lower case, quotes and spaces trimmed): `MAILER-DAEMON <>`,
 * `Mail Delivery System <MAILER-DAEMON@…>`, Exchange's `Microsoft Outlook <postmaster@…>` is covered by its address.
 */
export const REPORT_SENDER_NAMES: readonly string[] = [
  'mailer-daemon',
  'mail delivery system',
  'mail delivery subsystem',
  'mail delivery service',
  'mail administrator',
  'postmaster',
  'mail system',
  'mail delivery',
];

/**
 * Auto-Submitted values (RFC 3834, RFC 5436) that make a message worth reading as a possible report. `auto-replied` is
 * left out: out-of-office replies carry it too (a report with it is found by its sender or structure).
 */
export const REPORT_AUTO_SUBMITTED: readonly string[] = ['auto-generated', 'auto-notified'];

/** MIME types that make a message's structure a report's: a returned message or its headers, a status part. */
export const REPORT_PART_TYPES: readonly string[] = [
  'message/delivery-status',
  'message/global-delivery-status',
  'message/rfc822',
  'message/global',
  'message/global-headers',
  'text/rfc822-headers',
  'text/rfc822-header',
  'message/feedback-report',
  'message/disposition-notification',
];

/** Parts that carry the returned message or its header block. */
export const RETURNED_PART_TYPES: readonly string[] = [
  'message/rfc822',
  'message/global',
  'message/global-headers',
  'text/rfc822-headers',
  'text/rfc822-header',
];

/** Parts that carry RFC 3464 per-recipient fields. */
export const STATUS_PART_TYPES: readonly string[] = ['message/delivery-status', 'message/global-delivery-status'];

export interface MailSystemRule {
  system: string;
  /** Phrases in a plain-text bounce that say delivery failed (lower case). */
  failure: readonly string[];
  /** Lines after which the returned message (or its headers) is pasted (lower case, matched within a line). */
  returned: readonly string[];
  /** Phrases of the same system's delay warning, if it sends one as text. */
  delay?: readonly string[];
}

/** Per mail system: what its plain-text bounces say, and where they paste the returned message. */
export const MAIL_SYSTEM_RULES: readonly MailSystemRule[] = [
  {
    system: 'postfix',
    failure: ["i'm sorry to have to inform you that your message could not", 'this is the mail system at host'],
    returned: ['undelivered message headers', 'undelivered message'],
    delay: ['this is a delivery status notification, not an error', '####### this is a warning message only'],
  },
  {
    system: 'exim',
    failure: ['a message that you sent could not be delivered to one or more of its', 'this message was created automatically by mail delivery software'],
    returned: ['------ this is a copy of the message, including all the headers. ------', "------ this is a copy of the message's headers. ------"],
    delay: ['a message that you sent has not yet been delivered to one or more of its', 'no action is required on your part. delivery attempts will continue'],
  },
  {
    system: 'sendmail',
    failure: ['----- transcript of session follows -----', 'the original message was received at'],
    returned: ['----- original message follows -----', '----- message header follows -----', '----- the following is a copy of the message header'],
    delay: ['warning: could not send message for past', 'this is a warning message only'],
  },
  {
    system: 'qmail',
    failure: ["i'm afraid i wasn't able to deliver your message to the following addresses", 'this is the qmail-send program at'],
    returned: ['--- below this line is a copy of the message.', '--- enclosed are the original headers of the message.'],
  },
  {
    system: 'dragonfly',
    failure: ['there was an error delivering your mail to'],
    returned: ['message headers follow.', 'original message follows.'],
  },
  {
    system: 'exchange',
    failure: ['delivery has failed to these recipients or groups', 'your message did not reach some or all of the intended recipients'],
    returned: ['original message headers:'],
    delay: ['delivery is delayed to these recipients or groups'],
  },
  {
    system: 'gmail',
    failure: ['delivery to the following recipient failed permanently', 'address not found', "your message wasn't delivered"],
    returned: ['----- original message -----', '----- message header follows -----'],
    delay: ['delivery to the following recipient has been delayed', 'this is a warning message only'],
  },
  {
    system: 'opensmtpd',
    failure: ['this is the mailer-daemon, please do not reply to this e-mail', 'an error has occurred while attempting to deliver a message'],
    returned: ['below is a copy of the original message:'],
    delay: ['delivery attempts will continue'],
  },
  {
    system: 'courier',
    failure: ['your message to the following recipients cannot be delivered'],
    returned: ['--- original message follows'],
  },
  {
    system: 'yahoo',
    failure: ['sorry, we were unable to deliver your message to the following address'],
    returned: ['--- below this line is a copy of the message.'],
  },
  {
    system: 'domino',
    failure: ['your message was not delivered to'],
    returned: ['------- original message -------'],
  },
  {
    system: 'amazon-ses',
    failure: ['the following message to <', 'an error occurred while trying to deliver the mail to the following recipients'],
    returned: ['original message headers:'],
  },
  {
    system: 'gateway',
    failure: ['could not be delivered', 'invalid user address', 'delivery failed'],
    returned: ['original message:', 'original message headers'],
  },
];

export interface LanguageRule {
  language: string;
  /** Phrases of a failure notice, in its subject or its text (lower case). */
  failure: readonly string[];
  /** Phrases of a delay warning (not final). */
  delay: readonly string[];
}

/** Per language: how a failure notice and a delay warning read. Subject and text are searched alike. */
export const LANGUAGE_RULES: readonly LanguageRule[] = [
  {
    language: 'en',
    failure: [
      'undeliverable',
      'undelivered mail',
      'delivery status notification (failure)',
      'returned mail',
      'mail delivery failed',
      'delivery failure',
      'failure notice',
      'mail failure',
      'could not be delivered',
      'non-delivery',
      'permanent error',
      'delivery has failed',
      'was not delivered',
      'unable to deliver',
      'message not delivered',
      'failed permanently',
      'mail failed',
      'returning message to sender',
      'returned to sender',
    ],
    delay: [
      'delivery status notification (delay)',
      'delayed mail',
      'delivery delayed',
      'will retry',
      'still trying',
      'has not yet been delivered',
      'warning: could not send',
    ],
  },
  {
    language: 'ja',
    failure: ['配信失敗', '配送失敗', '送信できませんでした', '配信できませんでした', '配送できませんでした', 'エラーメール', '宛先不明'],
    delay: ['配信遅延', '配送遅延', '再送を試みます'],
  },
  {
    language: 'ru',
    failure: ['недоставленное сообщение', 'не может быть доставлено', 'не может быть отправлено', 'не удалось доставить', 'не доставлено'],
    delay: ['доставка задерживается', 'задержка доставки'],
  },
  {
    language: 'de',
    failure: ['unzustellbar', 'nicht zustellbar', 'konnte nicht zugestellt werden', 'zustellung fehlgeschlagen', 'fehlgeschlagene zustellung'],
    delay: ['zustellung verzögert', 'verzögerte zustellung'],
  },
  {
    language: 'fr',
    failure: ['non remis', 'échec de la remise', "n'a pas pu être remis", 'message non délivré', 'impossible de remettre', 'non distribuable'],
    delay: ['remise différée', 'remise retardée'],
  },
  {
    language: 'es',
    failure: ['no se puede entregar', 'no se pudo entregar', 'entrega fallida', 'no entregado', 'error en la entrega'],
    delay: ['entrega retrasada'],
  },
  {
    language: 'pt',
    failure: ['não é possível entregar', 'não foi possível entregar', 'não entregue', 'falha na entrega'],
    delay: ['entrega atrasada'],
  },
  {
    language: 'it',
    failure: ['non recapitabile', 'impossibile recapitare', 'mancato recapito', 'non è stato possibile recapitare'],
    delay: ['recapito ritardato'],
  },
  {
    language: 'nl',
    failure: ['onbestelbaar', 'kan niet worden bezorgd', 'niet afgeleverd'],
    delay: ['vertraagde bezorging'],
  },
  {
    language: 'pl',
    failure: ['niedostarczalne', 'nie można dostarczyć', 'nie dostarczono'],
    delay: ['opóźnione dostarczenie'],
  },
  {
    language: 'zh',
    failure: ['退信', '无法投递', '未送达', '投递失败', '無法傳遞'],
    delay: ['延迟投递', '延遲傳遞'],
  },
  {
    language: 'ko',
    failure: ['전달되지 않음', '배달 실패'],
    delay: ['배달 지연'],
  },
];

/** Why a delivery failed; Sisimai's reason categories, folded to what this service decides on. */
export type BounceReason =
  'user_unknown' | 'host_unknown' | 'mailbox_full' | 'policy' | 'spam_block' | 'expired' | 'network' | 'mailbox_disabled' | 'content' | 'other';

export interface ReasonRule {
  reason: Exclude<BounceReason, 'other'>;
  /**
   * `hard`: the address is wrong whatever the status class; `soft`: it may work later whatever the class;
   * `status`: by the status class (5 → hard, 4 → soft).
   */
  severity: 'hard' | 'soft' | 'status';
  /** RFC 3463 subject.detail codes (`1.1` of `5.1.1`). */
  statuses: readonly string[];
  /** Diagnostic phrases (lower case). */
  phrases: readonly string[];
}

/**
 * The reason of a failure: the diagnostic's phrases are tried first, in this order (the first table entry with a
 * phrase found wins), then the status code. Order matters: "domain does not exist" is host_unknown before user_unknown's
 * "does not exist", "attachment not allowed" content before policy's "not allowed".
 */
export const REASON_RULES: readonly ReasonRule[] = [
  {
    reason: 'mailbox_full',
    severity: 'soft',
    statuses: ['2.2', '2.3'],
    phrases: [
      'mailbox full',
      'mailbox is full',
      'quota exceeded',
      'over quota',
      'exceeded storage allocation',
      'insufficient storage',
      'mailbox size limit',
      'disk quota',
      // The same in other languages (ja, de, fr, ru).
      'メールボックスが一杯',
      'postfach voll',
      'boîte aux lettres pleine',
      'ящик переполнен',
    ],
  },
  {
    reason: 'expired',
    severity: 'soft',
    statuses: ['4.7'],
    phrases: [
      'retry timeout exceeded',
      'message expired',
      'queue.expired',
      'retry time not reached',
      'could not be delivered for',
      'giving up on',
      'too long in queue',
      'delivery time expired',
      'message timed out',
    ],
  },
  {
    reason: 'host_unknown',
    severity: 'hard',
    statuses: ['1.2', '4.4'],
    phrases: [
      'host not found',
      'domain not found',
      'no such domain',
      'host unknown',
      'unrouteable mail domain',
      'name or service not known',
      'nxdomain',
      'domain does not exist',
      'no mx record',
    ],
  },
  {
    reason: 'user_unknown',
    severity: 'hard',
    statuses: ['1.1', '1.0', '1.3', '1.6'],
    phrases: [
      'user unknown',
      'unknown user',
      'no such user',
      'no such mailbox',
      'no mailbox here',
      'mailbox unavailable',
      'mailbox not found',
      'invalid recipient',
      'invalid mailbox',
      'recipient not found',
      'does not exist',
      'unknown recipient',
      'unknown or illegal alias',
      'unrouteable address',
      'no such recipient',
      'invalid user address',
      'resolver.adr.recipnotfound',
      'account does not exist',
    ],
  },
  {
    reason: 'mailbox_disabled',
    severity: 'status',
    statuses: ['2.1'],
    phrases: [
      'account disabled',
      'mailbox disabled',
      'account has been disabled',
      'account is disabled',
      'mailbox is disabled',
      'account suspended',
      'inactive account',
      'mailbox inactive',
    ],
  },
  {
    reason: 'content',
    severity: 'status',
    statuses: ['3.4', '6.0', '6.1', '6.3', '6.6', '7.3'],
    phrases: ['message too large', 'message size exceeds', 'virus', 'malware', 'content rejected', 'attachment not allowed'],
  },
  {
    reason: 'spam_block',
    severity: 'status',
    statuses: ['7.501', '7.511', '7.28', '7.606', '7.708'],
    phrases: ['spam', 'blacklist', 'blocklist', 'block list', 'spamhaus', 'listed in', 'poor reputation', 'bad reputation', 'rbl', 'junk mail'],
  },
  {
    reason: 'policy',
    severity: 'status',
    statuses: ['7.0', '7.1', '7.26', '7.27', '7.509', '7.515', '7.7', '7.8', '7.9'],
    phrases: [
      'policy',
      'access denied',
      'not allowed',
      'not permitted',
      'relay denied',
      'relaying denied',
      'authentication',
      'dmarc',
      'spf',
      'rejected by',
      'blocked',
    ],
  },
  {
    reason: 'network',
    severity: 'soft',
    statuses: ['4.1', '4.2', '4.3', '4.5', '4.6', '3.0', '3.1', '3.2'],
    phrases: [
      'connection timed out',
      'connection refused',
      'network is unreachable',
      'no route to host',
      'connection reset',
      'lost connection',
      'temporarily unavailable',
      'try again later',
      'failed to connect',
    ],
  },
];

/**
 * Microsoft's Junk Mail Reporting Program (JMRP) sends complaints not as ARF but as `multipart/mixed` with the
 * complained-of message attached, carrying this header (Sisimai arf-22..24; docs/deliverability.md).
 */
export const JMRP_MARKER_HEADER = 'x-hmxmroriginalrecipient';
/** Its senders' domains (`staff@hotmail.com`), matched as a whole label of the domain, and its subject. */
export const JMRP_SENDER_DOMAINS: readonly string[] = ['hotmail', 'outlook', 'msn', 'live', 'microsoft'];
export const JMRP_SUBJECT = 'complaint about message from';

/** ARF Feedback-Types (RFC 5965 §7.3 and RFC 6650) and what they mean here. */
export const FEEDBACK_TYPE_RULES: Readonly<Record<string, { complaint: boolean; optOut: boolean }>> = {
  abuse: { complaint: true, optOut: false },
  fraud: { complaint: true, optOut: false },
  'opt-out': { complaint: true, optOut: true },
  'opt-out-list': { complaint: true, optOut: true },
  'not-spam': { complaint: false, optOut: false },
  virus: { complaint: false, optOut: false },
  other: { complaint: false, optOut: false },
  'auth-failure': { complaint: false, optOut: false },
};
