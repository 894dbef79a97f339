import { randomUUID } from 'node:crypto';
import type { WebhookEvent } from '../../webhooks/outbox.js';
import { sampleEventData as catalogSample } from '../../webhooks/event-catalog.js';

/**
 * A realistic `data` object for each event type, for `POST /events/trigger` (`outreach trigger EVENT`): the event
 * catalog's sample (the same shape real events have), with fresh ids that refer to nothing, `test: true` so that a
 * receiver can tell it from a real event, and the workspace it was triggered in.
 */
export function sampleEventData(event: WebhookEvent, workspaceId: string, now: Date): Record<string, unknown> {
  const ids = { leadId: randomUUID(), replyId: randomUUID(), webhookId: randomUUID(), sequenceId: randomUUID() };
  return { ...catalogSample(event, ids, now), test: true, workspaceId };
}
