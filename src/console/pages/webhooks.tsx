import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import { AppError } from '../../lib/errors.js';
import type { ConsoleDeps } from '../deps.js';
import { CsrfField, may, NeedsRole, PostButton, Table } from '../layout.js';
import { pageContext, sendPage } from '../render.js';
import { Badge, EmptyState, NoticeBox, plural, When } from '../ui.js';

const WebhookForm = Type.Object(
  {
    _csrf: Type.Optional(Type.String()),
    url: Type.Optional(Type.String()),
    events: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  },
  { additionalProperties: true },
);
type WebhookForm = { url?: string; events?: string | string[] };

/** What an action answers: an outcome (done) or the service's refusal; a create also carries the secret, shown once. */
interface Notice {
  kind: 'done' | 'refused';
  text: string;
  secret?: string;
}

/** Webhook subscriptions: list, create (the secret is shown once), delete and a test ping, through the webhooks service. */
export function webhooksPages(app: AppInstance, deps: ConsoleDeps) {
  const webhooks = deps.services.webhooks;

  async function render(req: FastifyRequest, reply: FastifyReply, notice: Notice | null, status = 200, form: WebhookForm = {}) {
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    const { webhooks: list, events } = await webhooks.listWebhooks(req.consoleSession!.auth.workspaceId);
    const chosen = new Set(Array.isArray(form.events) ? form.events : form.events ? [form.events] : []);
    return sendPage(reply, ctx, {
      title: 'Webhooks',
      nav: 'webhooks',
      status,
      body: (
        <>
          <h1>Webhooks</h1>
          <NoticeBox notice={notice}>
            {notice?.secret ? (
              <p class="secret-once">
                Signing secret, shown only now: <code safe>{notice.secret}</code>
              </p>
            ) : (
              ''
            )}
          </NoticeBox>
          <section aria-labelledby="subscriptions">
            <h2 id="subscriptions">Subscriptions</h2>
            {list.length === 0 ? (
              <EmptyState title="No webhook yet.">
                <p>
                  Add a receiver below: it gets a signed POST for each event you choose, such as <code>reply.received</code>.
                </p>
              </EmptyState>
            ) : (
              <Table
                caption={`${plural(list.length, 'subscription')}, each signed with its own secret`}
                columns={['URL', 'Events', 'Created', 'Actions']}
                items={list}
                row={(w) => (
                  <tr>
                    <td class="id" safe>
                      {w.url}
                    </td>
                    <td>
                      {w.events.map((e) => (
                        <>
                          <Badge value={e} label={e} tone="info" />{' '}
                        </>
                      ))}
                    </td>
                    <td>
                      <When at={w.createdAt} />
                    </td>
                    <td>
                      {may(ctx, 'webhooks.manage') ? (
                        <div class="actions">
                          <PostButton
                            action={`/console/webhooks/${w.id}/ping`}
                            csrfToken={ctx.csrfToken}
                            label="Send test ping"
                            ariaLabel={`Send test ping to ${w.url}`}
                          />
                          <PostButton
                            action={`/console/webhooks/${w.id}/delete`}
                            csrfToken={ctx.csrfToken}
                            label="Delete"
                            ariaLabel={`Delete ${w.url}`}
                            variant="danger"
                            confirm={`Delete the webhook to ${w.url}? It stops receiving events at once; its signing secret cannot be brought back.`}
                          />
                        </div>
                      ) : (
                        ''
                      )}
                    </td>
                  </tr>
                )}
              />
            )}
          </section>
          <section aria-labelledby="new-webhook">
            <h2 id="new-webhook">New webhook</h2>
            {!may(ctx, 'webhooks.manage') ? (
              <NeedsRole ctx={ctx} action="webhooks.manage" what="Creating a webhook" />
            ) : (
              <form method="post" action="/console/webhooks">
                <CsrfField token={ctx.csrfToken} />
                <p>
                  <label for="webhook-url">Receiver URL</label>
                  <input id="webhook-url" name="url" type="url" required placeholder="https://example.com/hooks/outreach" value={form.url ?? ''} />
                </p>
                <fieldset>
                  <legend>Events</legend>
                  {events.map((e) => (
                    <label class="check">
                      <input type="checkbox" name="events" value={e} checked={chosen.has(e)} /> <span>{e}</span>
                    </label>
                  ))}
                </fieldset>
                <p>
                  <button type="submit" class="primary">
                    Create webhook
                  </button>
                </p>
              </form>
            )}
          </section>
        </>
      ),
    });
  }

  /** The service's refusals (bad URL, limit reached, unknown id) show on the page with their status and message. */
  async function attempt(req: FastifyRequest, reply: FastifyReply, run: () => Promise<Notice>, form: WebhookForm = {}) {
    try {
      const notice = await run();
      return render(req, reply, notice);
    } catch (err) {
      if (err instanceof AppError && err.statusCode >= 400 && err.statusCode < 500 && err.statusCode !== 404) {
        return render(req, reply, { kind: 'refused', text: err.message }, err.statusCode, form);
      }
      throw err;
    }
  }

  app.get('/console/webhooks', { schema: { hide: true } }, async (req, reply) => render(req, reply, null));

  app.post<{ Body: WebhookForm }>('/console/webhooks', { schema: { hide: true, body: WebhookForm } }, async (req, reply) => {
    const form = req.body;
    const events = Array.isArray(form.events) ? form.events : form.events ? [form.events] : [];
    return attempt(
      req,
      reply,
      async () => {
        if (events.length === 0) throw new AppError(400, 'invalid_request', 'choose at least one event');
        const created = await deps.services.webhooks.createWebhook(req.consoleSession!.auth.workspaceId, { url: form.url ?? '', events });
        return { kind: 'done', text: `Created a webhook for ${created.url}.`, secret: created.secret };
      },
      form,
    );
  });

  app.post<{ Params: { id: string } }>('/console/webhooks/:id/delete', { schema: { hide: true, body: WebhookForm } }, async (req, reply) =>
    attempt(req, reply, async () => {
      await webhooks.deleteWebhook(req.consoleSession!.auth.workspaceId, req.params.id);
      return { kind: 'done', text: 'Webhook deleted.' };
    }),
  );

  app.post<{ Params: { id: string } }>('/console/webhooks/:id/ping', { schema: { hide: true, body: WebhookForm } }, async (req, reply) =>
    attempt(req, reply, async () => {
      await webhooks.sendTestPing(req.consoleSession!.auth.workspaceId, req.params.id);
      return { kind: 'done', text: 'Test ping scheduled: it goes out with the next delivery round.' };
    }),
  );
}
