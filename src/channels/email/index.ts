// The e-mail channel's public face: what the rest of the service may use of it (mailbox management, the
// unsubscribe token, readiness and seeding). The driver and the watcher are reached through the registry.
export {
  createMailboxesService,
  MailboxError,
  addMailbox,
  listMailboxViews,
  removeMailbox,
  type AddMailboxRequest,
  type MailboxesService,
} from './mailboxes.service.js';
export { mailboxInputProblem, redactSecrets, type MailboxHealth, type MailboxInput, type MailboxView } from './mailboxes.schemas.js';
export { upsertMailbox as seedMailbox } from './mailboxes.repository.js';
export { createMailboxConnectService, MAILBOX_CALLBACK_PATH, type BeginMailboxConnect, type MailboxConnectService } from './oauth-connect.js';
export { MAIL_HOSTS, MAIL_SCOPES, PROVIDER_NAMES as MAIL_PROVIDER_NAMES } from './oauth-tokens.js';
export { failedMailboxes } from './inbox.repository.js';
export { readUnsubscribeToken, unsubscribeToken } from './unsubscribe-token.js';
export {
  createDomainChecksService,
  DomainCheckError,
  domainCheckIssues,
  type CheckStatus,
  type DomainChecksService,
  type MailboxDomainReport,
  type RecordCheck,
} from './domain-checks.js';
export { isDisposableDomain, isRoleAddress } from './address-checks.js';
export { pausedMailboxes, type MailboxPause, type ResumeResult } from './reputation.js';
