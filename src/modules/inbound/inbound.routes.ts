import { WorkspaceClientHeader, errorResponses } from '../../app/schemas.js';
import type { AppInstance } from '../../app/types.js';
import type { InboundService } from './inbound.service.js';
import {
  INBOUND_LIMIT_DEFAULT,
  InboundQuery,
  InboundResponse,
  MailboxParams,
  RemoveSuppressionBody,
  RemoveSuppressionResponse,
  SuppressionParams,
  SuppressionsQuery,
  SuppressionsResponse,
} from './inbound.schemas.js';

export async function inboundRoutes(app: AppInstance, opts: { inbound: InboundService }) {
  const { inbound } = opts;

  app.get(
    '/mailboxes/:mailbox/inbound',
    {
      schema: {
        'x-extension': true,
        summary: 'What the inbox watcher decided about each message of a mailbox (extension: not in the spec)',
        description:
          'One record per INBOX message read: when it arrived, its Message-ID, what it was tied to (our Message-ID and the lead) or ' +
          'why not, the verdict, the reason and the effect (docs/email.md "The inbound record"). No message text: the console alone ' +
          'shows a short excerpt. Newest first; pass `nextCursor` as `after` until it is null. Records are kept for the activity ' +
          'retention window (OUTREACH_ACTIVITY_RETENTION_DAYS). 404 for a mailbox of another workspace or none. Honors X-Workspace-Client.',
        tags: ['mailboxes'],
        headers: WorkspaceClientHeader,
        params: MailboxParams,
        querystring: InboundQuery,
        response: { 200: InboundResponse, ...errorResponses(404) },
      },
    },
    async (req) =>
      inbound.listInbound(req.auth.workspaceId, req.params.mailbox, {
        verdict: req.query.verdict,
        after: req.query.after,
        limit: req.query.limit ?? INBOUND_LIMIT_DEFAULT,
      }),
  );

  app.get(
    '/suppressions',
    {
      schema: {
        'x-extension': true,
        summary: 'The suppression list: addresses the workspace never e-mails again (extension: not in the spec)',
        description:
          'Each address with why (bounced_hard, bounced_soft, complaint, unsubscribed, opted_out, left_company), the lead and our ' +
          'message that caused it, and when (docs/deliverability.md "The suppression list"). `q` narrows to an address prefix or ' +
          '`@domain`; `reason` to one reason. Newest first; pass `nextCursor` as `after` until it is null. Honors X-Workspace-Client.',
        tags: ['mailboxes'],
        headers: WorkspaceClientHeader,
        querystring: SuppressionsQuery,
        response: { 200: SuppressionsResponse, ...errorResponses() },
      },
    },
    async (req) =>
      inbound.listSuppressions(req.auth.workspaceId, {
        q: req.query.q,
        reason: req.query.reason,
        after: req.query.after,
        limit: req.query.limit ?? INBOUND_LIMIT_DEFAULT,
      }),
  );

  app.delete(
    '/suppressions/:address',
    {
      config: { action: 'suppressions.remove' },
      preValidation: async (req: { body: unknown }) => {
        if (req.body === undefined || req.body === null) req.body = {};
      },
      schema: {
        'x-extension': true,
        summary: 'Remove an address from the suppression list (extension: not in the spec)',
        description:
          'The workspace may e-mail it again (a bounced address that works again, a person who came back). Recorded with who did it ' +
          '(optional body `{by}`, default api) and, when a lead caused it, a `manual_override` entry `{op: "suppression_removed"}` on ' +
          'that lead. 409 `suppression_permanent` for an address of a person who asked to stop (unsubscribed, opted_out, complaint): ' +
          'those are never removed, and removing one never reverses an opt-out. 404 when the address is not on the list.',
        tags: ['mailboxes'],
        headers: WorkspaceClientHeader,
        params: SuppressionParams,
        body: RemoveSuppressionBody,
        response: { 200: RemoveSuppressionResponse, ...errorResponses(404, 409) },
      },
    },
    async (req) => inbound.removeSuppression(req.auth.workspaceId, req.params.address, req.body?.by ?? 'api'),
  );
}
