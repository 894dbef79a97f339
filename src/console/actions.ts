import type { FastifyInstance, RouteOptions } from 'fastify';
import { assertRoleAllows, type Action } from '../domain/roles.js';
import type { AuditService } from '../modules/audit/index.js';

/**
 * The action of each form the console posts, for the role check (src/domain/roles.ts, docs/roles.md): the same
 * actions as the API's routes for the same acts. Keyed by method and route as registered.
 */
export const CONSOLE_ACTIONS: Record<string, Action> = {
  'POST /console/workspace': 'read',
  'POST /console/sign-out-everywhere': 'sessions.end_all',
  // one prospect, drafts, the day's work: member
  'POST /console/leads/:id/meeting': 'meetings.record',
  'POST /console/leads/:id/opt-out': 'leads.write',
  'POST /console/leads/:id/stop': 'leads.write',
  'POST /console/leads/enroll': 'leads.enroll_draft',
  'POST /console/leads/import/preview': 'leads.write',
  'POST /console/leads/import/run': 'leads.write',
  'POST /console/leads/new': 'leads.write',
  'POST /console/leads/twins/distinct': 'leads.write',
  'POST /console/leads/twins/merge': 'leads.write',
  'POST /console/plays/:id/edit': 'drafts.write',
  'POST /console/plays/new': 'drafts.write',
  'POST /console/sequences/:id/steps': 'drafts.write',
  'POST /console/sequences/new': 'drafts.write',
  'POST /console/replies/:id/decide': 'replies.decide',
  'POST /console/replies/:id/mark-handled': 'replies.decide',
  'POST /console/tasks/:id/complete': 'tasks.work',
  'POST /console/tasks/:id/mark-sent': 'tasks.work',
  'POST /console/tasks/:id/perform': 'tasks.work',
  'POST /console/tasks/:id/send-anyway': 'tasks.work',
  'POST /console/tasks/:id/skip': 'tasks.work',
  'POST /review/plays/:id/candidates/:candidateId/good-fit': 'leads.enroll_draft',
  'POST /review/plays/:id/candidates/:candidateId/not-a-good-fit': 'candidates.review',
  'POST /review/plays/:id/enroll': 'leads.enroll_draft',
  // sending to many, and what the workspace sends through: admin
  'POST /console/sequences/:id/approve': 'sequences.approve',
  // Preview launch reads and simulates; nothing of the workspace changes.
  'POST /console/sequences/:id/forecast': 'read',
  'POST /console/sequences/:id/status': 'sequences.set_status',
  'POST /console/plays/:id/review-api': 'plays.set_status',
  'POST /console/plays/:id/status': 'plays.set_status',
  'POST /console/accounts/:accountId/booking-link': 'accounts.manage',
  'POST /console/accounts/linkedin/:accountId/delivery': 'accounts.manage',
  'POST /console/accounts/linkedin/:accountId/gateway': 'accounts.manage',
  'POST /console/accounts/mailbox/add': 'accounts.manage',
  'POST /console/accounts/mailbox/connect': 'accounts.manage',
  'POST /console/accounts/x/:userId/disconnect': 'accounts.manage',
  'POST /console/accounts/x/connect': 'accounts.manage',
  'POST /console/mailboxes/:id/check': 'accounts.manage',
  'POST /console/mailboxes/:id/disconnect': 'accounts.manage',
  'POST /console/mailboxes/:id/edit': 'accounts.manage',
  'POST /console/mailboxes/:id/pause': 'accounts.manage',
  'POST /console/mailboxes/:id/resume': 'accounts.manage',
  'POST /console/mailboxes/:id/test': 'accounts.manage',
  'POST /console/meetings/booking-link': 'settings.manage',
  'POST /console/meetings/endpoints': 'meetings.endpoints',
  'POST /console/meetings/endpoints/:id/remove': 'meetings.endpoints',
  'POST /console/meetings/endpoints/:id/rotate': 'meetings.endpoints',
  'POST /console/meetings/endpoints/:id/unsubscribe': 'meetings.endpoints',
  'POST /console/meetings/subscribe': 'meetings.endpoints',
  'POST /console/suppressions/remove': 'suppressions.remove',
  'POST /console/webhooks': 'webhooks.manage',
  'POST /console/webhooks/:id/delete': 'webhooks.manage',
  'POST /console/webhooks/:id/ping': 'webhooks.manage',
  // people: the service asks for people.manage_admins (owner) when an admin or owner role is given or taken
  'POST /console/people/invite': 'people.manage',
  'POST /console/people/:id/role': 'people.manage',
  'POST /console/people/:id/remove': 'people.manage',
  'GET /console/audit': 'audit.read',
  // a person's own passkey (the handler needs a person's session)
  'POST /console/passkeys/register/options': 'read',
  'POST /console/passkeys/register': 'read',
};

/**
 * The console's registration rule: a GET page is `read`; a form post must be listed above (or be public: sign-in
 * and sign-out), so no form escapes the role check by being forgotten. Throws at start-up naming the route.
 */
export function requireConsoleAction(route: RouteOptions): void {
  const config = (route.config ?? {}) as { consolePublic?: boolean; action?: Action };
  if (config.consolePublic || config.action) return;
  const methods = [route.method].flat();
  const listed = methods.map((m) => CONSOLE_ACTIONS[`${m} ${route.url}`]).find(Boolean);
  // A page (GET) or the not-found catch-all of a prefix reads; a form post must be listed.
  if (methods.every((m) => m === 'GET' || m === 'HEAD') || route.url.endsWith('*')) config.action = listed ?? 'read';
  else if (listed) config.action = listed;
  else throw new Error(`console route ${methods.join(',')} ${route.url} names no action (src/console/actions.ts)`);
  route.config = config;
}

/**
 * The console's role check (docs/roles.md), the API's rule: each route's action is set as it registers, and a signed-in
 * request beyond the session's role is refused 403 `forbidden` (the error page names the role needed); nothing changes.
 */
export function registerConsoleRoles(app: FastifyInstance, audit: AuditService): void {
  app.decorateRequest('consoleRefused', false);
  app.addHook('onRoute', requireConsoleAction);
  app.addHook('preHandler', async (req) => {
    const action = req.routeOptions.config?.action;
    if (req.consoleSession && action) assertRoleAllows(req.consoleSession.auth.role, action);
  });
  // A form's security-relevant act that succeeded goes to the audit trail, like the API's (a refusal shown as a
  // notice after a redirect is not an act: redirectWithNotice marks it).
  app.addHook('onResponse', async (req, reply) => {
    const action = req.routeOptions.config?.action;
    if (!action || !req.consoleSession || req.method === 'GET' || reply.statusCode >= 400 || req.consoleRefused) return;
    await audit.recordAct({ auth: req.consoleSession.auth, action, route: `${req.method} ${req.routeOptions.url ?? ''}`, params: req.params, body: req.body });
  });
}
