import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import { AppError } from '../../lib/errors.js';
import type { ConsoleDeps } from '../deps.js';
import { CsrfField, Table } from '../layout.js';
import { EmptyState, redirectWithNotice, type Notice } from '../ui.js';

// The booking link per sender (issue 42 §5, docs/meetings.md): the workspace's (on the Meetings page) and each messaging
// account's own, used before the workspace's (on the Accounts page). Both through the meetings service.

export type BookingLinks = Awaited<ReturnType<ConsoleDeps['services']['meetings']['getBookingLinks']>>;

/** One booking-link form: the URL field (empty clears it) and a Save button naming whose link it is. */
function LinkForm(props: { action: string; id: string; value: string | null; label: string; whose: string; csrfToken: string }) {
  return (
    <form method="post" action={props.action} class="filters">
      <CsrfField token={props.csrfToken} />
      <label for={props.id} safe>
        {props.label}
      </label>{' '}
      <input
        id={props.id}
        name="bookingLink"
        type="url"
        maxlength="2000"
        autocomplete="off"
        placeholder="https://calendly.com/you/30min"
        value={props.value ?? ''}
      />{' '}
      <button type="submit">
        Save<span class="visually-hidden" safe>{` ${props.whose}`}</span>
      </button>
    </form>
  );
}

/** The workspace's booking link (Meetings page): sent by "Send booking link" when the reply's account has none of its own. */
export function WorkspaceBookingLink(props: { links: BookingLinks; csrfToken: string }) {
  return (
    <section aria-labelledby="booking-link">
      <h2 id="booking-link">Booking link</h2>
      <p class="meta">
        The link “Send booking link” sends when the reply’s account has no link of its own (Accounts). This service adds the lead’s reference to it, so a
        booking made through it is matched to the lead. Leave it empty to send none.
      </p>
      <LinkForm
        action="/console/meetings/booking-link"
        id="workspace-booking-link"
        value={props.links.workspace}
        label="Workspace booking link"
        whose="the workspace booking link"
        csrfToken={props.csrfToken}
      />
    </section>
  );
}

/** Each messaging account's own booking link (Accounts page), used before the workspace's. */
export function AccountBookingLinks(props: { links: BookingLinks; csrfToken: string }) {
  const { links } = props;
  return (
    <section aria-labelledby="account-booking-links">
      <h2 id="account-booking-links">Booking links</h2>
      <p class="meta">
        An account’s own booking link is sent instead of the workspace’s (set on <a href="/console/meetings">Meetings</a>
        {links.workspace ? (
          <>
            {': '}
            <code safe>{links.workspace}</code>
          </>
        ) : (
          ', none set yet'
        )}
        ). Leave it empty to use the workspace’s.
      </p>
      {links.accounts.length === 0 ? (
        <EmptyState title="No messaging account to give a booking link." />
      ) : (
        <Table
          caption="Each account’s own booking link"
          columns={['Account', 'Booking link']}
          items={links.accounts}
          row={(a) => (
            <tr>
              <td safe>{a.name}</td>
              <td>
                <LinkForm
                  action={`/console/accounts/${encodeURIComponent(a.id)}/booking-link`}
                  id={`booking-link-${a.id}`}
                  value={a.bookingLink}
                  label={`Booking link of ${a.name}`}
                  whose={`the booking link of ${a.name}`}
                  csrfToken={props.csrfToken}
                />
              </td>
            </tr>
          )}
        />
      )}
    </section>
  );
}

const LinkBody = Type.Object({ _csrf: Type.Optional(Type.String()), bookingLink: Type.Optional(Type.String()) }, { additionalProperties: true });
const AccountParams = Type.Object({ accountId: Type.String({ maxLength: 200 }) });

/**
 * POST /console/meetings/booking-link and /console/accounts/{id}/booking-link. A refused link (not an http(s) URL, over
 * 2000 characters) comes back on the page it was typed on, red; another workspace's account is the 404 page.
 */
export function bookingLinkPages(
  app: AppInstance,
  deps: ConsoleDeps,
  rerender: Record<'meetings' | 'accounts', (req: FastifyRequest, reply: FastifyReply, notice: Notice, status: number) => Promise<FastifyReply>>,
) {
  const face = () => deps.services.meetings;
  const linkOf = (body: { bookingLink?: string }) => (typeof body.bookingLink === 'string' && body.bookingLink.trim() !== '' ? body.bookingLink : null);
  const savedText = (what: string, link: string | null) => (link ? `Saved ${what}: ${link}` : `Cleared ${what}.`);

  app.post<{ Body: { bookingLink?: string } }>('/console/meetings/booking-link', { schema: { hide: true, body: LinkBody } }, async (req, reply) => {
    let saved: { bookingLink: string | null };
    try {
      saved = await face().setWorkspaceBookingLink(req.consoleSession!.auth.workspaceId, linkOf(req.body));
    } catch (err) {
      if (err instanceof AppError && err.statusCode === 400) return rerender.meetings(req, reply, { kind: 'refused', text: `Not saved: ${err.message}.` }, 400);
      throw err;
    }
    return redirectWithNotice(reply, '/console/meetings', { kind: 'done', text: savedText('the workspace booking link', saved.bookingLink) });
  });

  app.post<{ Params: { accountId: string }; Body: { bookingLink?: string } }>(
    '/console/accounts/:accountId/booking-link',
    { schema: { hide: true, params: AccountParams, body: LinkBody } },
    async (req, reply) => {
      let saved: { bookingLink: string | null };
      try {
        saved = await face().setAccountBookingLink(req.consoleSession!.auth.workspaceId, req.params.accountId, linkOf(req.body));
      } catch (err) {
        if (err instanceof AppError && err.statusCode === 400)
          return rerender.accounts(req, reply, { kind: 'refused', text: `Booking link not saved: ${err.message}.` }, 400);
        throw err;
      }
      return redirectWithNotice(reply, '/console/accounts', { kind: 'done', text: savedText('the account’s booking link', saved.bookingLink) });
    },
  );
}
