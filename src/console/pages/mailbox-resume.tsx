import { Type } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import type { MailboxPause } from '../../channels/email/index.js';
import { notFound } from '../../lib/errors.js';
import { PostButton, TableHead } from '../layout.js';
import type { ConsoleDeps } from '../plugin.js';
import { Badge, exactTime, redirectWithNotice } from '../ui.js';

// The console's face of the reputation guards (docs/deliverability.md): the Accounts page lists the mailboxes a guard
// paused, each with a Resume button (the same service as `outreach mailbox resume`).

const ResumeParams = Type.Object({ id: Type.String({ maxLength: 200 }) });
const ResumeBody = Type.Object({ _csrf: Type.Optional(Type.String()) }, { additionalProperties: true });

const REASON = { bounces: 'Too many hard bounces', complaints: 'Abuse complaint' } as const;

/** The paused mailboxes, on the Accounts page; nothing when none is paused. */
export function PausedMailboxes(props: { paused: MailboxPause[]; csrfToken: string }) {
  if (props.paused.length === 0) return '';
  return (
    <section aria-labelledby="paused-mailboxes">
      <h2 id="paused-mailboxes">Paused mailboxes</h2>
      <p>
        A paused mailbox sends nothing: its steps wait, and no lead fails or loses an attempt for it. Find out why first (clean the list, or stop mailing people
        who did not ask for it), then resume it.
      </p>
      <table>
        <caption>Mailboxes a reputation guard paused</caption>
        <TableHead columns={['Mailbox', 'Why', 'Since', 'Actions']} />
        <tbody>
          {props.paused.map((p) => (
            <tr>
              <td safe>{p.address}</td>
              <td>
                <Badge value={`paused_${p.reason}`} label={REASON[p.reason]} tone="bad" /> <span safe>{p.detail ?? ''}</span>
              </td>
              <td safe>{exactTime(p.pausedAt)}</td>
              <td>
                <PostButton
                  action={`/console/mailboxes/${encodeURIComponent(p.id)}/resume`}
                  csrfToken={props.csrfToken}
                  label="Resume"
                  ariaLabel={`Resume ${p.address}`}
                  confirm={`Resume ${p.address}? It starts sending again.`}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function mailboxResumePages(app: AppInstance, deps: ConsoleDeps) {
  app.post<{ Params: { id: string } }>(
    '/console/mailboxes/:id/resume',
    { schema: { hide: true, params: ResumeParams, body: ResumeBody } },
    async (req, reply) => {
      const workspaceId = req.consoleSession!.auth.workspaceId;
      let done;
      try {
        done = await deps.services.mailboxes.resume(workspaceId, req.params.id, 'console');
      } catch (e) {
        if ((e as { code?: string }).code === 'mailbox_not_found') throw notFound('mailbox');
        throw e;
      }
      return redirectWithNotice(reply, '/console/accounts', {
        kind: 'done',
        text: done.resumed ? `Resumed ${done.address}: it sends again.` : `${done.address} was not paused.`,
      });
    },
  );
}
