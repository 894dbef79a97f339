import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import { actorOf } from '../../domain/auth-context.js';
import { AppError } from '../../lib/errors.js';
import { ROLES } from '../../domain/vocabulary.js';
import type { ConsoleDeps } from '../deps.js';
import { CsrfField, may, NeedsRole, PostButton, Table } from '../layout.js';
import { pageContext, sendPage } from '../render.js';
import { Badge, NoticeBox, plural, When, type Notice } from '../ui.js';
import { YourPasskeys } from './passkeys.js';

const Form = Type.Object(
  { _csrf: Type.Optional(Type.String()), email: Type.Optional(Type.String()), role: Type.Optional(Type.String()), name: Type.Optional(Type.String()) },
  { additionalProperties: true },
);
type Form = { email?: string; role?: string; name?: string };

/** Settings → People: who works in this workspace and with which role; invite, change a role, remove (docs/roles.md). */
export function peoplePages(app: AppInstance, deps: ConsoleDeps) {
  const people = deps.services.people;
  const base = (deps.config.publicUrl ?? '').replace(/\/+$/, '');
  const by = (req: FastifyRequest) => ({ actor: actorOf(req.consoleSession!.auth), role: req.consoleSession!.auth.role });

  async function render(req: FastifyRequest, reply: FastifyReply, notice: (Notice & { link?: string }) | null, status = 200) {
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    const list = await people.list(req.consoleSession!.auth.workspaceId);
    const mine = req.consoleSession!.auth.person?.id;
    return sendPage(reply, ctx, {
      title: 'People',
      nav: 'people',
      status,
      body: (
        <>
          <h1>People</h1>
          <NoticeBox notice={notice}>
            {notice?.link ? (
              <p class="secret-once">
                Send this one-time link to them (shown only now; it works once, within 7 days): <code safe>{notice.link}</code>
              </p>
            ) : (
              ''
            )}
          </NoticeBox>
          <p>
            A member works replies, tasks and drafts; an admin also approves and activates sequences and connects accounts; an owner also manages keys and
            admins (docs/roles.md in the project lists every act).
          </p>
          <Table
            caption={plural(list.length, 'person', 'people')}
            columns={['Name', 'E-mail', 'Role', 'Since', 'Actions']}
            items={list}
            row={(p) => (
              <tr>
                <td safe>{p.id === mine ? `${p.name} (you)` : p.name}</td>
                <td safe>{p.email}</td>
                <td>
                  <Badge value={p.role} label={p.role} tone={p.role === 'member' ? 'info' : 'good'} />
                </td>
                <td>
                  <When at={p.since} />
                </td>
                <td>
                  {may(ctx, 'people.manage') ? (
                    <div class="actions">
                      <form method="post" action={`/console/people/${p.id}/role`} class="inline">
                        <CsrfField token={ctx.csrfToken} />
                        <label for={`role-${p.id}`} class="visually-hidden" safe>{`Role of ${p.name}`}</label>
                        <select id={`role-${p.id}`} name="role">
                          {ROLES.map((r) => (
                            <option value={r} selected={r === p.role} safe>
                              {r}
                            </option>
                          ))}
                        </select>
                        <button type="submit" aria-label={`Change the role of ${p.name}`}>
                          Change role
                        </button>
                      </form>
                      <PostButton
                        action={`/console/people/${p.id}/remove`}
                        csrfToken={ctx.csrfToken}
                        label="Remove"
                        ariaLabel={`Remove ${p.name}`}
                        variant="danger"
                        confirm={`Remove ${p.name} from this workspace? They are signed out at once.`}
                      />
                    </div>
                  ) : (
                    ''
                  )}
                </td>
              </tr>
            )}
          />
          <YourPasskeys deps={deps} personId={mine} />
          <section aria-labelledby="invite">
            <h2 id="invite">Invite someone</h2>
            {!may(ctx, 'people.manage') ? (
              <NeedsRole ctx={ctx} action="people.manage" what="Inviting someone" />
            ) : (
              <form method="post" action="/console/people/invite">
                <CsrfField token={ctx.csrfToken} />
                <p>
                  <label for="invite-email">E-mail</label>
                  <input id="invite-email" name="email" type="email" required autocomplete="off" />
                </p>
                <p>
                  <label for="invite-role">Role</label>
                  <select id="invite-role" name="role">
                    {ROLES.map((r) => (
                      <option value={r} selected={r === 'member'} safe>
                        {r}
                      </option>
                    ))}
                  </select>
                </p>
                <p>
                  <button type="submit" class="primary">
                    Create invitation link
                  </button>
                </p>
              </form>
            )}
          </section>
        </>
      ),
    });
  }

  /** A refusal (bad address, a role the actor may not give, the last owner) shows on the page; nothing changed. */
  async function attempt(req: FastifyRequest, reply: FastifyReply, run: () => Promise<Notice & { link?: string }>) {
    try {
      return await render(req, reply, await run());
    } catch (err) {
      if (err instanceof AppError && err.statusCode >= 400 && err.statusCode < 500 && err.statusCode !== 404) {
        return render(req, reply, { kind: 'refused', text: `${err.message}. Nothing was changed.` }, err.statusCode);
      }
      throw err;
    }
  }

  app.get('/console/people', { schema: { hide: true } }, async (req, reply) => render(req, reply, null));

  app.post<{ Body: Form }>('/console/people/invite', { schema: { hide: true, body: Form } }, async (req, reply) =>
    attempt(req, reply, async () => {
      const made = await people.invite(req.consoleSession!.auth.workspaceId, { email: req.body.email ?? '', role: req.body.role ?? '' }, by(req));
      return { kind: 'done', text: `Invited ${made.email} as ${made.role}.`, link: `${base}${made.path}` };
    }),
  );

  app.post<{ Params: { id: string }; Body: Form }>('/console/people/:id/role', { schema: { hide: true, body: Form } }, async (req, reply) =>
    attempt(req, reply, async () => {
      const r = await people.setRole(req.consoleSession!.auth.workspaceId, req.params.id, req.body.role ?? '', by(req));
      return { kind: 'done', text: r.changed ? `${r.email} is now ${r.role}; they sign in again to use it.` : `${r.email} is already ${r.role}.` };
    }),
  );

  app.post<{ Params: { id: string } }>('/console/people/:id/remove', { schema: { hide: true, body: Form } }, async (req, reply) =>
    attempt(req, reply, async () => {
      const r = await people.remove(req.consoleSession!.auth.workspaceId, req.params.id, by(req));
      return { kind: 'done', text: `Removed ${r.email}; they are signed out.` };
    }),
  );
}
