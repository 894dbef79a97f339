import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import { MailboxError, type MailboxesService } from '../../channels/email/index.js';
import { notFound } from '../../lib/errors.js';
import type { ConsoleDeps } from '../deps.js';
import { pageContext, sendPage } from '../render.js';
import { NoticeBox, redirectWithNotice, type Notice } from '../ui.js';
import { MAILBOX_PRESETS, MailboxFormBody, serverOf, shownOf, type FormBody, type Server, type Shown } from './mailbox-form.js';

// Accounts → Add mailbox (SMTP/IMAP), and a mailbox's Edit, Test again and Pause (docs/email.md "Mailboxes in the
// console"). Every action goes through the mailboxes service: the same SMTP verify and IMAP login + INBOX checks as
// `outreach mailbox add`, behind the public-address guard (OUTREACH_MAILBOX_ALLOW_PRIVATE). The password is never
// written back into a page, a redirect or a log line.

const MailboxParams = Type.Object({ id: Type.String({ maxLength: 200 }) });
const PresetQuery = Type.Object({ preset: Type.Optional(Type.String({ maxLength: 40 })) }, { additionalProperties: true });
const S = (max: number) => Type.Optional(Type.String({ maxLength: max }));
const MailboxForm = Type.Object(
  {
    _csrf: S(200),
    address: S(320),
    displayName: S(200),
    smtpHost: S(253),
    smtpPort: S(10),
    smtpSecurity: S(20),
    imapHost: S(253),
    imapPort: S(10),
    imapSecurity: S(20),
    username: S(320),
    password: S(1024),
  },
  { additionalProperties: true },
);
const ActionBody = Type.Object({ _csrf: S(200) }, { additionalProperties: true });

/**
 * A refusal in plain words: which check failed and what to look at. The server's own reason (passwords removed by the
 * service) follows for an unreachable server; a refused address says only that (the detail goes to the log).
 */
export function refusalText(e: MailboxError, servers?: { smtp?: Server; imap?: Server }): string {
  if (e.code === 'server_not_allowed') return "That server's address is not allowed.";
  if (e.code === 'smtp_failed' || e.code === 'imap_failed') {
    const kind = e.code === 'smtp_failed' ? 'SMTP' : 'IMAP';
    const s = e.code === 'smtp_failed' ? servers?.smtp : servers?.imap;
    if (e.extra.health === 'auth_failed')
      return `The ${kind} server refused the login: check the user name and the password (Gmail, iCloud, Yahoo, Zoho and Fastmail need an app password).`;
    const where = s ? ` ${s.host}:${s.port}` : '';
    const what = kind === 'IMAP' ? 'reach the IMAP server or open its INBOX' : 'reach the SMTP server';
    return `Could not ${what}${where}: ${e.extra.detail ?? 'no answer'}. Check the server name, the port and the security setting.`;
  }
  return e.message;
}

/** Writes why a check failed to the log, never the password (the service removed it from every message). */
function logRefusal(req: FastifyRequest, e: MailboxError, what: string) {
  req.log.warn({ code: e.code, detail: e.extra.logDetail ?? e.message }, `${what}: ${e.code}`);
}

export function mailboxAddPages(app: AppInstance, deps: ConsoleDeps) {
  const mailboxes: MailboxesService = deps.services.mailboxes;
  const ADD = '/console/accounts/mailbox/add';

  async function renderAdd(req: FastifyRequest, reply: FastifyReply, values: Shown, notice: Notice | null, status = 200, invalid?: string, hint?: string) {
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    return sendPage(reply, ctx, {
      title: 'Add mailbox (SMTP/IMAP)',
      nav: 'accounts',
      status,
      body: (
        <>
          <p>
            <a href="/console/accounts">Accounts</a>
          </p>
          <h1>Add mailbox (SMTP/IMAP)</h1>
          <NoticeBox notice={notice} />
          <p>
            Any mailbox that offers SMTP and IMAP with a password. On Add, this service signs in to SMTP, then to IMAP and opens the INBOX, exactly as{' '}
            <code>outreach mailbox add</code> does; the mailbox is saved only when both work.
          </p>
          <nav aria-label="Provider presets" class="presets">
            <span>Fill in the servers for: </span>
            {Object.entries(MAILBOX_PRESETS).map(([key, p]) => (
              <>
                <a href={`${ADD}?preset=${key}`} data-preset={key} safe>
                  {p.name}
                </a>{' '}
              </>
            ))}
          </nav>
          {hint ? (
            <p class="meta" role="note" safe>
              {hint}
            </p>
          ) : (
            ''
          )}
          <MailboxFormBody action={ADD} csrfToken={ctx.csrfToken} values={values} invalid={invalid} submit="Check and add mailbox" />
        </>
      ),
    });
  }

  app.get<{ Querystring: { preset?: string } }>(ADD, { schema: { hide: true, querystring: PresetQuery } }, async (req, reply) => {
    const p = req.query.preset ? MAILBOX_PRESETS[req.query.preset] : undefined;
    const values: Shown = p
      ? {
          smtpHost: p.smtp.host,
          smtpPort: String(p.smtp.port),
          smtpSecurity: p.smtp.security,
          imapHost: p.imap.host,
          imapPort: String(p.imap.port),
          imapSecurity: p.imap.security,
        }
      : {};
    return renderAdd(req, reply, values, null, 200, undefined, p?.hint);
  });

  app.post<{ Body: FormBody }>(ADD, { schema: { hide: true, body: MailboxForm } }, async (req, reply) => {
    const b = req.body;
    const workspaceId = req.consoleSession!.auth.workspaceId;
    const servers = { smtp: serverOf(b, 'smtp'), imap: serverOf(b, 'imap') };
    try {
      const view = await mailboxes.addWithPassword(workspaceId, {
        address: b.address ?? '',
        displayName: b.displayName ?? null,
        ...servers,
        username: b.username ?? null,
        password: b.password ?? '',
      });
      return redirectWithNotice(reply, `/console/mailboxes/${encodeURIComponent(view.id)}`, {
        kind: 'done',
        text: `Added mailbox ${view.address}: SMTP and IMAP both signed in. Its password is stored encrypted.`,
      });
    } catch (e) {
      if (!(e instanceof MailboxError)) throw e;
      logRefusal(req, e, 'console mailbox add refused');
      const status = e.code === 'invalid_mailbox' || e.code === 'server_not_allowed' ? 400 : e.code === 'account_not_found' ? 404 : 422;
      return renderAdd(req, reply, shownOf(b), { kind: 'refused', text: refusalText(e, servers) }, status, e.extra.field);
    }
  });

  // Edit: the display name alone is saved as is; a server, the user name or a new password is checked first.
  async function renderEdit(req: FastifyRequest, reply: FastifyReply, id: string, values: Shown | null, notice: Notice | null, status = 200, invalid?: string) {
    const workspaceId = req.consoleSession!.auth.workspaceId;
    let d;
    try {
      d = await mailboxes.detail(workspaceId, id);
    } catch (e) {
      if (e instanceof MailboxError && e.code === 'mailbox_not_found') throw notFound('mailbox');
      throw e;
    }
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    const base = `/console/mailboxes/${encodeURIComponent(d.view.id)}`;
    const shown: Shown = values ?? {
      displayName: d.view.displayName ?? '',
      smtpHost: d.smtp?.host,
      smtpPort: d.smtp ? String(d.smtp.port) : undefined,
      smtpSecurity: d.smtp?.security,
      imapHost: d.imap?.host,
      imapPort: d.imap ? String(d.imap.port) : undefined,
      imapSecurity: d.imap?.security,
      username: d.smtp?.username ?? '',
    };
    return sendPage(reply, ctx, {
      title: `Edit ${d.view.address}`,
      nav: 'accounts',
      status,
      body: (
        <>
          <p>
            <a href={base} safe>{`Mailbox ${d.view.address}`}</a>
          </p>
          <h1 safe>{`Edit ${d.view.address}`}</h1>
          <NoticeBox notice={notice} />
          <p>A change to a server, the user name or the password is saved only after SMTP and IMAP both sign in with it.</p>
          <MailboxFormBody
            action={`${base}/edit`}
            csrfToken={ctx.csrfToken}
            values={shown}
            invalid={invalid}
            edit={{ oauth: d.view.auth !== 'password' }}
            submit="Check and save"
          />
        </>
      ),
    });
  }

  app.get<{ Params: { id: string } }>('/console/mailboxes/:id/edit', { schema: { hide: true, params: MailboxParams } }, async (req, reply) =>
    renderEdit(req, reply, req.params.id, null, null),
  );

  app.post<{ Params: { id: string }; Body: FormBody }>(
    '/console/mailboxes/:id/edit',
    { schema: { hide: true, params: MailboxParams, body: MailboxForm } },
    async (req, reply) => {
      const b = req.body;
      const workspaceId = req.consoleSession!.auth.workspaceId;
      const has = (k: 'smtp' | 'imap') => b[`${k}Host`] !== undefined || b[`${k}Port`] !== undefined || b[`${k}Security`] !== undefined;
      const servers = { smtp: has('smtp') ? serverOf(b, 'smtp') : undefined, imap: has('imap') ? serverOf(b, 'imap') : undefined };
      try {
        const view = await mailboxes.edit(workspaceId, req.params.id, {
          ...(b.displayName !== undefined && { displayName: b.displayName }),
          ...(servers.smtp && { smtp: servers.smtp }),
          ...(servers.imap && { imap: servers.imap }),
          username: b.username ?? null,
          password: b.password || null,
        });
        return redirectWithNotice(reply, `/console/mailboxes/${encodeURIComponent(view.id)}`, { kind: 'done', text: `Saved mailbox ${view.address}.` });
      } catch (e) {
        if (!(e instanceof MailboxError)) throw e;
        if (e.code === 'mailbox_not_found') throw notFound('mailbox');
        logRefusal(req, e, 'console mailbox edit refused');
        const status = e.code === 'invalid_mailbox' || e.code === 'server_not_allowed' ? 400 : 422;
        return renderEdit(req, reply, req.params.id, shownOf(b), { kind: 'refused', text: refusalText(e, servers) }, status, e.extra.field);
      }
    },
  );

  // Test again: both checks on the stored servers; the mailbox's health becomes what they found.
  app.post<{ Params: { id: string } }>(
    '/console/mailboxes/:id/test',
    { schema: { hide: true, params: MailboxParams, body: ActionBody } },
    async (req, reply) => {
      const workspaceId = req.consoleSession!.auth.workspaceId;
      let r;
      try {
        r = await mailboxes.test(workspaceId, req.params.id);
      } catch (e) {
        if (e instanceof MailboxError && e.code === 'mailbox_not_found') throw notFound('mailbox');
        if (!(e instanceof MailboxError)) throw e;
        return redirectWithNotice(reply, `/console/mailboxes/${encodeURIComponent(req.params.id)}`, { kind: 'refused', text: e.message });
      }
      const path = `/console/mailboxes/${encodeURIComponent(r.view.id)}`;
      if (!r.failed) return redirectWithNotice(reply, path, { kind: 'done', text: `Tested ${r.view.address}: SMTP and IMAP both signed in.` });
      logRefusal(req, r.failed, 'console mailbox test failed');
      return redirectWithNotice(reply, path, { kind: 'refused', text: refusalText(r.failed) });
    },
  );

  // Pause: a person's pause, lifted by Resume (mailbox-resume.tsx); the guards' pauses are separate (docs/email.md).
  app.post<{ Params: { id: string } }>(
    '/console/mailboxes/:id/pause',
    { schema: { hide: true, params: MailboxParams, body: ActionBody } },
    async (req, reply) => {
      const workspaceId = req.consoleSession!.auth.workspaceId;
      let r;
      try {
        r = await mailboxes.pause(workspaceId, req.params.id, 'console');
      } catch (e) {
        if (e instanceof MailboxError && e.code === 'mailbox_not_found') throw notFound('mailbox');
        throw e;
      }
      return redirectWithNotice(reply, `/console/mailboxes/${encodeURIComponent(r.mailboxId)}`, {
        kind: 'done',
        text: r.paused ? `Paused ${r.address}: it sends nothing until you resume it (replies are still read).` : `${r.address} was already paused.`,
      });
    },
  );
}
