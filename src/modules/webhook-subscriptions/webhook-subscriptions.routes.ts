import { badRequest } from '../../lib/errors.js';
import { WorkspaceClientHeader, errorResponses } from '../../app/schemas.js';
import type { AppInstance } from '../../app/types.js';
import { explainInvalidCreateBody, type WebhooksService } from './webhook-subscriptions.service.js';
import {
  CreateWebhookBody,
  CreateWebhookResponse,
  DeleteWebhookResponse,
  ListWebhooksResponse,
  TestWebhookResponse,
  WebhookIdParams,
} from './webhook-subscriptions.schemas.js';

const SELECTOR_NOTE =
  'Honors X-Workspace-Client like every other operation: subscriptions belong to the selected workspace, and an id of another workspace answers 404.';

// Webhooks are cross-channel, so no route here is gated on the social-network channel.
export async function webhooksRoutes(app: AppInstance, opts: { webhooks: WebhooksService }) {
  app.get(
    '/webhooks',
    {
      schema: {
        summary: 'List the enabled webhook subscriptions and the event catalog',
        description: `Secrets are never returned. ${SELECTOR_NOTE}`,
        tags: ['webhooks'],
        headers: WorkspaceClientHeader,
        response: { 200: ListWebhooksResponse, ...errorResponses() },
      },
    },
    async (req) => opts.webhooks.listWebhooks(req.auth.workspaceId),
  );

  app.post(
    '/webhooks',
    {
      config: { action: 'webhooks.manage' },
      // The schema error for an unknown or repeated event is generic; the handler names the event.
      attachValidation: true,
      schema: {
        summary: 'Create a signed webhook subscription; the signing secret is shown only in this response',
        description:
          'Not idempotent: list subscriptions before retrying after an uncertain outcome. At most 10 enabled subscriptions per ' +
          'workspace (409 webhook_limit_reached). 400 errors: invalid_webhook_url (with `reason`: not_https, port_not_allowed, ' +
          'credentials_not_allowed, fragment_not_allowed, ip_literal_not_allowed, dns_resolution_failed, non_ipv4_address, ' +
          `non_public_address, invalid_url, url_too_long), unknown_event, duplicate_event, invalid_request. ${SELECTOR_NOTE}`,
        tags: ['webhooks'],
        headers: WorkspaceClientHeader,
        body: CreateWebhookBody,
        response: { 201: CreateWebhookResponse, ...errorResponses(409) },
      },
    },
    async (req, reply) => {
      if (req.validationError) {
        const first = (req.validationError as { validation?: { instancePath?: string }[] }).validation?.[0];
        throw explainInvalidCreateBody(req.body, first?.instancePath) ?? badRequest('invalid_request', req.validationError.message);
      }
      return reply.status(201).send(await opts.webhooks.createWebhook(req.auth.workspaceId, req.body));
    },
  );

  app.post(
    '/webhooks/:id/test',
    {
      config: { action: 'webhooks.manage' },
      schema: {
        summary: 'Send a ping to the subscription right away, whatever its event list',
        description: `202 means scheduled, not received. 404 webhook not found for an unknown, deleted or foreign id. ${SELECTOR_NOTE}`,
        tags: ['webhooks'],
        headers: WorkspaceClientHeader,
        params: WebhookIdParams,
        response: { 202: TestWebhookResponse, ...errorResponses(404) },
      },
    },
    async (req, reply) => reply.status(202).send(await opts.webhooks.sendTestPing(req.auth.workspaceId, req.params.id)),
  );

  app.delete(
    '/webhooks/:id',
    {
      config: { action: 'webhooks.manage' },
      schema: {
        summary: 'Disable an enabled subscription',
        description: `A repeat delete answers 404 webhook not found. Deliveries already queued may still complete. ${SELECTOR_NOTE}`,
        tags: ['webhooks'],
        headers: WorkspaceClientHeader,
        params: WebhookIdParams,
        response: { 200: DeleteWebhookResponse, ...errorResponses(404) },
      },
    },
    async (req) => opts.webhooks.deleteWebhook(req.auth.workspaceId, req.params.id),
  );
}
