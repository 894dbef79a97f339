import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import { AppError } from '../../lib/errors.js';
import type { EndpointView } from '../../modules/meetings/index.js';
import type { ConsoleDeps } from '../deps.js';
import { CsrfField, PostButton } from '../layout.js';
import { redirectWithNotice, When, type Notice } from '../ui.js';

// Settings → Meetings: a Calendly endpoint's webhook subscription made here with a person's personal access token
// (docs/meetings.md "Subscribing from here"), and deleted here. Through the meetings service only; the token is sent
// once, kept encrypted by the service, and never shown again.

/** The endpoint table's Calendly-subscription cell: the subscription made here and its Unsubscribe button, or none. */
export function SubscriptionCell(props: { endpoint: EndpointView; csrfToken: string }) {
  const e = props.endpoint;
  if (e.tool !== 'calendly') return <span class="muted">not offered by Cal.com</span>;
  if (!e.subscription) return <span class="muted">none made here</span>;
  return (
    <>
      <span safe>{`${e.subscription.scope === 'organization' ? 'Organization' : 'User'} scope, `}</span>
      <When at={e.subscription.subscribedAt} />{' '}
      <PostButton
        action={`/console/meetings/endpoints/${e.id}/unsubscribe`}
        csrfToken={props.csrfToken}
        label="Unsubscribe"
        ariaLabel={`Delete the Calendly subscription of endpoint ${e.label ?? e.id}`}
        confirm="Delete this subscription at Calendly? Calendly stops sending bookings to this endpoint."
      />
    </>
  );
}

/** The form that makes a Calendly endpoint's subscription with a personal access token; nothing without a Calendly endpoint. */
export function SubscribeForm(props: { endpoints: EndpointView[]; csrfToken: string }) {
  const calendly = props.endpoints.filter((e) => e.tool === 'calendly');
  if (calendly.length === 0) return '';
  return (
    <section aria-labelledby="calendly-subscribe">
      <h2 id="calendly-subscribe">Subscribe at Calendly</h2>
      <p class="meta">
        Instead of calling Calendly’s API yourself, give a personal access token (Calendly → Integrations → API and webhooks; webhooks need a paid plan). This
        service creates the subscription with the endpoint’s URL and secret, keeps the token encrypted to renew it when the secret is rotated, and never shows
        it again.
      </p>
      <form method="post" action="/console/meetings/subscribe">
        <CsrfField token={props.csrfToken} />
        <p>
          <label for="subscribe-endpoint">Endpoint</label>{' '}
          <select id="subscribe-endpoint" name="endpointId">
            {calendly.map((e) => (
              <option value={e.id} safe>{`${e.label ?? 'Calendly'} (${e.id.slice(0, 8)})${e.subscription ? ': subscribed, replace' : ''}`}</option>
            ))}
          </select>
        </p>
        <p>
          <label for="subscribe-token">Personal access token</label>{' '}
          <input id="subscribe-token" name="personalAccessToken" type="password" autocomplete="off" maxlength="4000" required />
        </p>
        <p>
          <label for="subscribe-scope">Bookings of</label>{' '}
          <select id="subscribe-scope" name="scope">
            <option value="user">the token’s own user</option>
            <option value="organization">the whole organization (an owner’s or admin’s token)</option>
          </select>
        </p>
        <p>
          <button type="submit">Subscribe at Calendly</button>
        </p>
      </form>
    </section>
  );
}

const SubscribeBody = Type.Object(
  {
    _csrf: Type.Optional(Type.String()),
    endpointId: Type.Optional(Type.String({ maxLength: 100 })),
    personalAccessToken: Type.Optional(Type.String()),
    scope: Type.Optional(Type.String({ maxLength: 20 })),
  },
  { additionalProperties: true },
);
const Params = Type.Object({ id: Type.String({ maxLength: 100 }) });

/** POST /console/meetings/subscribe and /console/meetings/endpoints/{id}/unsubscribe; a refusal comes back on the page, red. */
export function subscriptionPages(
  app: AppInstance,
  deps: ConsoleDeps,
  rerender: (req: FastifyRequest, reply: FastifyReply, notice: Notice, status: number) => Promise<FastifyReply>,
) {
  const { meetings } = deps.services;
  const refusedOr = async (req: FastifyRequest, reply: FastifyReply, work: () => Promise<Notice>) => {
    let done: Notice;
    try {
      done = await work();
    } catch (err) {
      if (err instanceof AppError && err.statusCode !== 404) return rerender(req, reply, { kind: 'refused', text: `${err.message}.` }, err.statusCode);
      throw err;
    }
    return redirectWithNotice(reply, '/console/meetings', done);
  };

  app.post<{ Body: { endpointId?: string; personalAccessToken?: string; scope?: string } }>(
    '/console/meetings/subscribe',
    { schema: { hide: true, body: SubscribeBody } },
    async (req, reply) =>
      refusedOr(req, reply, async () => {
        const token = req.body.personalAccessToken?.trim() ?? '';
        if (!token || token.length > 4000) throw new AppError(400, 'invalid_request', 'Give the personal access token (at most 4000 characters)');
        const scope = req.body.scope === 'organization' ? 'organization' : 'user';
        await meetings.subscribeEndpoint(req.consoleSession!.auth.workspaceId, req.body.endpointId ?? '', { personalAccessToken: token, scope });
        return { kind: 'done', text: `Subscribed at Calendly (${scope} scope): bookings now reach this endpoint.` };
      }),
  );

  app.post<{ Params: { id: string } }>(
    '/console/meetings/endpoints/:id/unsubscribe',
    { schema: { hide: true, params: Params, body: SubscribeBody } },
    async (req, reply) =>
      refusedOr(req, reply, async () => {
        await meetings.unsubscribeEndpoint(req.consoleSession!.auth.workspaceId, req.params.id);
        return { kind: 'done', text: 'The Calendly subscription is deleted.' };
      }),
  );
}
