import { Type } from 'typebox';
import { WorkspaceClientHeader, errorResponses } from '../../app/schemas.js';
import type { AppInstance } from '../../app/types.js';
import { MAX_AUDIT_PAGE, type AuditService } from './audit.service.js';

const AuditQuery = Type.Object(
  {
    actor: Type.Optional(Type.String({ maxLength: 100, description: 'a person’s or key’s id' })),
    action: Type.Optional(Type.String({ maxLength: 60, description: 'one action, e.g. `person.invited`, `sequences.set_status`' })),
    from: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601 time, inclusive' })),
    to: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601 time, exclusive' })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_AUDIT_PAGE, default: 50 })),
  },
  { additionalProperties: false },
);

const AuditResponse = Type.Object(
  {
    entries: Type.Array(
      Type.Object(
        {
          id: Type.String({ format: 'uuid' }),
          at: Type.String({ format: 'date-time' }),
          actor: Type.Object(
            {
              kind: Type.Union([Type.Literal('person'), Type.Literal('key'), Type.Literal('operator'), Type.Literal('engine')]),
              id: Type.Union([Type.String(), Type.Null()]),
              label: Type.String(),
            },
            { additionalProperties: false },
          ),
          action: Type.String(),
          subject: Type.Union([Type.String(), Type.Null()]),
          detail: Type.Record(Type.String(), Type.Unknown()),
        },
        { additionalProperties: false },
      ),
    ),
    nextCursor: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

/** GET /api/v1/audit: the workspace's audit trail (docs/roles.md "Audit trail"), for admins. */
export async function auditRoutes(app: AppInstance, opts: { audit: AuditService }) {
  app.get(
    '/audit',
    {
      config: { action: 'audit.read' },
      schema: {
        'x-extension': true,
        summary: 'The audit trail: sign-ins, people, keys, connects, webhooks, approvals and activations, newest first (extension)',
        description:
          'Append-only, in its own record (the activity ledger’s list of actions is the spec’s). Filters combine with AND; keyset ' +
          'pages: pass `nextCursor` as `cursor`. Needs the admin role. Honors X-Workspace-Client.',
        tags: ['workspace'],
        headers: WorkspaceClientHeader,
        querystring: AuditQuery,
        response: { 200: AuditResponse, ...errorResponses() },
      },
    },
    async (req) => opts.audit.list(req.auth.workspaceId, req.query),
  );
}
