// The e-mail channel's public face: what the rest of the service may use of it (mailbox management, the
// unsubscribe token, readiness and seeding). The driver and the watcher are reached through the registry.
export {
  createMailboxesService,
  MailboxError,
  addMailbox,
  listMailboxViews,
  removeMailbox,
  type AddMailboxRequest,
  type MailboxListItem,
  type MailboxesService,
} from './mailboxes/mailboxes.service.js';
export { mailboxInputProblem, redactSecrets, type MailboxHealth, type MailboxInput, type MailboxView } from './mailboxes/mailboxes.schemas.js';
export { upsertMailbox as seedMailbox } from './mailboxes/mailboxes.repository.js';
export { createMailboxConnectService, MAILBOX_CALLBACK_PATH, type BeginMailboxConnect, type MailboxConnectService } from './mailboxes/oauth-connect.js';
export { MAIL_HOSTS, MAIL_SCOPES, PROVIDER_NAMES as MAIL_PROVIDER_NAMES } from './mailboxes/oauth-tokens.js';
export { failedMailboxes } from './inbox/inbox.repository.js';
export { readUnsubscribeToken, unsubscribeToken } from './send/unsubscribe-token.js';
export {
  createDomainChecksService,
  DomainCheckError,
  domainCheckIssues,
  type CheckStatus,
  type DomainChecksService,
  type MailboxDomainReport,
  type RecordCheck,
} from './deliverability/domain-checks.js';
export { isDisposableDomain, isRoleAddress, isWellFormedAddress } from './deliverability/address-checks.js';
export { pausedMailboxes, type MailboxPause, type ResumeResult } from './deliverability/reputation.js';
export { createInboundRecordsService, InboundRecordsError, type InboundPage, type InboundRecordView, type InboundRecordsService } from './inbox/records.js';
export { INBOUND_VERDICTS, type InboundVerdict } from './inbox/verdict.js';
export { emailChannel } from './descriptor.js';
