import type { AppDeps } from './deps.js';
import type { AppInstance } from './types.js';
import type { RateLimitStore } from './plugins/rate-limit.js';
import { workspacesRoutes } from '../modules/workspaces/index.js';
import { adminRoutes } from '../modules/admin/index.js';
import { webhooksRoutes } from '../modules/webhook-subscriptions/index.js';
import { playsRoutes } from '../modules/plays/index.js';
import { xLeadsRoutes } from '../modules/x-leads/index.js';
import { sequencesRoutes } from '../modules/sequences/index.js';
import { forecastRoutes } from '../modules/forecast/index.js';
import { publicDataRoutes } from '../modules/publicdata/index.js';
import { progressRoutes } from '../modules/progress/index.js';
import { reportsRoutes } from '../modules/reports/index.js';
import { leadsRoutes } from '../modules/leads/index.js';
import { activityRoutes } from '../modules/activity/index.js';
import { repliesRoutes } from '../modules/replies/index.js';
import { eventsRoutes } from '../modules/events/index.js';
import { tasksRoutes } from '../modules/tasks/index.js';
import { inboundRoutes } from '../modules/inbound/index.js';
import { channelInboundRoutes } from '../modules/channel-inbound/index.js';
import { meetingsRoutes } from '../modules/meetings/index.js';
import { auditRoutes } from '../modules/audit/index.js';

/**
 * Every `/api/v1` module; the auth hook of the enclosing scope has already set `req.auth`. `limits` is the per-minute
 * budget the auth hook counts keys against; a route without a key (a channel's push) counts its callers against it.
 */
export async function registerApiRoutes(api: AppInstance, deps: AppDeps, limits: { store: RateLimitStore; perMinute: number }): Promise<void> {
  const { services } = deps;
  await api.register(workspacesRoutes, { workspaces: services.workspaces });
  await api.register(webhooksRoutes, { webhooks: services.webhooks });
  await api.register(playsRoutes, { plays: services.plays });
  await api.register(xLeadsRoutes, { xLeads: services.xLeads });
  await api.register(sequencesRoutes, { sequences: services.sequences });
  await api.register(forecastRoutes, { forecast: services.forecast });
  await api.register(publicDataRoutes, { publicData: services.publicData, readiness: services.readiness });
  await api.register(progressRoutes, { progress: services.progress });
  await api.register(reportsRoutes, { reports: services.reports });
  await api.register(leadsRoutes, { leads: services.leads });
  await api.register(activityRoutes, { activity: services.activity });
  await api.register(repliesRoutes, { replies: services.replies });
  await api.register(tasksRoutes, { tasks: services.tasks });
  await api.register(inboundRoutes, { inbound: services.inbound });
  await api.register(channelInboundRoutes, { channelInbound: services.channelInbound, rateLimit: limits });
  await api.register(meetingsRoutes, { meetings: services.meetings });
  await api.register(auditRoutes, { audit: services.audit });
  await api.register(eventsRoutes, { deps });
}

export async function registerAdminRoutes(admin: AppInstance, deps: AppDeps): Promise<void> {
  await admin.register(adminRoutes, { services: deps.services, adminToken: deps.config.adminToken, controlToken: deps.controlToken ?? null });
}
