import { Type } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import type { MailboxesService } from '../../channels/email/index.js';
import { notFound } from '../../lib/errors.js';
import { PostButton, Table } from '../layout.js';
import type { ConsoleDeps } from '../deps.js';
import { Badge, exactTime, redirectWithNotice } from '../ui.js';

// The console's face of the reputation guards (docs/deliverability.md): the Accounts page lists the mailboxes a guard
// paused, each with a Resume button (the same service as `outreach mailbox resume`).

const ResumeParams = Type.Object({ id: Type.String({ maxLength: 200 }) });
const ResumeBody = Type.Object({ _csrf: Type.Optional(Type.String()), back: Type.Optional(Type.String({ maxLength: 20 })) }, { additionalProperties: true });

const REASON = { bounces: 'Too many hard bounces', complaints: 'Abuse complaint', manual: 'Paused by a person' } as const;

type PausedMailbox = Awaited<ReturnType<MailboxesService['paused']>>[number];

/** The paused mailboxes (a guard's or a person's), on the Accounts page; nothing when none is paused. */
export function PausedMailboxes(props: { paused: PausedMailbox[]; csrfToken: string }) {
  if (props.paused.length === 0) return '';
  return (
    <section aria-labelledby="paused-mailboxes">
      <h2 id="paused-mailboxes">Paused mailboxes</h2>
      <p>
        A paused mailbox sends nothing: its steps wait, and no lead fails or loses an attempt for it. Find out why first (clean the list, or stop mailing people
        who did not ask for it), then resume it.
      </p>
      <Table
        caption="Mailboxes a reputation guard or a person paused"
        columns={['Mailbox', 'Why', 'Since', 'Actions']}
        items={props.paused}
        row={(p) => (
          <tr>
            <td safe>{p.address}</td>
            <td>
              <Badge value={`paused_${p.reason}`} label={REASON[p.reason]} tone={p.reason === 'manual' ? 'warn' : 'bad'} />{' '}
              <span safe>{p.reason === 'manual' ? '' : (p.detail ?? '')}</span>
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
        )}
      />
    </section>
  );
}

export function mailboxResumePages(app: AppInstance, deps: ConsoleDeps) {
  // Resume lifts a guard's pause or a person's (the service tells them apart); `back=mailbox` returns to its page.
  app.post<{ Params: { id: string }; Body: { back?: string } }>(
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
      const to = req.body.back === 'mailbox' ? `/console/mailboxes/${encodeURIComponent(done.mailboxId)}` : '/console/accounts';
      return redirectWithNotice(reply, to, {
        kind: 'done',
        text: done.resumed ? `Resumed ${done.address}: it sends again.` : `${done.address} was not paused.`,
      });
    },
  );
}
