import { randomUUID } from 'node:crypto';
import type { WebhookEvent } from '../../webhooks/outbox.js';

/**
 * A realistic `data` object for each event type, for `POST /events/trigger` (`outreach trigger EVENT`). Every sample
 * carries `test: true` so that a receiver can tell it from a real event; ids are fresh and refer to nothing.
 */
export function sampleEventData(event: WebhookEvent, workspaceId: string, now: Date): Record<string, unknown> {
  const leadId = randomUUID();
  const at = now.toISOString();
  const lead = { leadId, person: 'Ada Lovelace', company: 'Analytical Engines Ltd', linkedinUrl: 'https://www.linkedin.com/in/ada-lovelace-sample' };
  const base = { test: true, workspaceId };
  switch (event) {
    case 'reply.received':
      return {
        ...base,
        ...lead,
        replyId: randomUUID(),
        channel: 'linkedin',
        receivedAt: at,
        theirMessage: 'Thanks for reaching out, happy to talk next week.',
        draft: 'Great, does Tuesday 10:00 work?',
      };
    case 'lead.invited':
      return { ...base, ...lead, account: 'onb_00000000-0000-4000-8000-000000000000', invitedAt: at };
    case 'lead.accepted':
      return { ...base, ...lead, acceptedAt: at };
    case 'lead.messaged':
      return { ...base, ...lead, step: 1, messagedAt: at };
    case 'lead.emailed':
      return { ...base, ...lead, step: 1, emailedAt: at };
    case 'lead.meeting_booked':
      return { ...base, ...lead, bookedAt: at };
    case 'x.followed':
      return { ...base, leadId, xUserId: '1234567890', username: 'ada_sample', followedAt: at };
    case 'ping':
      return { ...base, message: 'This is a test event from outreach trigger.' };
  }
}
