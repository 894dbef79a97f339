import type { AppInstance } from '../../app/types.js';
import type { ConsoleDeps } from '../deps.js';
import { dashboardPage } from './dashboard.js';
import { playsPages } from './plays.js';
import { reviewPages } from './review.js';
import { accountsPages } from './accounts.js';
import { repliesPages } from './replies.js';
import { webhooksPages } from './webhooks.js';
import { peoplePages } from './people.js';
import { auditPages } from './audit.js';
import { joinPages } from './join.js';
import { passkeysPages } from './passkeys.js';
import type { FastifyReply } from 'fastify';
import { sequencesPages } from './sequences.js';
import { leadsActivityPages } from './leads-activity.js';
import { leadsImportPages } from './leads-import.js';
import { leadsEnrollPages } from './leads-enroll.js';
import { sequenceEditorPages } from './sequence-editor.js';
import { avatarPages } from './avatars.js';
import { leadPages } from './lead.js';
import { tasksPages } from './tasks.js';
import { mailboxPages } from './mailbox.js';
import { mailboxResumePages } from './mailbox-resume.js';
import { mailboxConnectPages } from './mailbox-connect.js';
import { suppressionsPages } from './suppressions.js';
import { leadsTwinsPages } from './leads-twins.js';
import { mailboxAddPages } from './mailbox-add.js';
import { meetingsPages } from './meetings.js';
import { meetingRecordPages } from './meeting-block.js';

/**
 * Every console page module, one line each (append, don't reorder). A module is `(app, deps) => void` and
 * registers its own routes in the console scope: session, CSRF, CSP and HTML errors already apply (docs/console.md).
 */
export async function registerConsolePages(
  app: AppInstance,
  deps: ConsoleDeps,
  setSessionCookie: (reply: FastifyReply, sessionId: string) => void,
): Promise<void> {
  // A person's invitation or sign-in link (docs/roles.md "People").
  joinPages(app, deps, setSessionCookie);
  passkeysPages(app, deps, setSessionCookie);
  dashboardPage(app, deps);
  playsPages(app, deps);
  reviewPages(app, deps);
  accountsPages(app, deps);
  repliesPages(app, deps);
  webhooksPages(app, deps);
  peoplePages(app, deps);
  auditPages(app, deps);
  sequencesPages(app, deps);
  leadsActivityPages(app, deps);
  sequenceEditorPages(app, deps);
  avatarPages(app, deps);
  leadPages(app, deps);
  leadsImportPages(app, deps);
  leadsEnrollPages(app, deps);
  tasksPages(app, deps);
  mailboxPages(app, deps);
  mailboxResumePages(app, deps);
  mailboxConnectPages(app, deps);
  suppressionsPages(app, deps);
  leadsTwinsPages(app, deps);
  mailboxAddPages(app, deps);
  meetingsPages(app, deps);
  meetingRecordPages(app, deps);
}
