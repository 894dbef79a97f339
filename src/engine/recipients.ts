import type { Channel, Recipient } from './channels/types.js';
import type { LeadContactRow } from './sql/rows.js';

const date = (d: Date | string | null) => (d === null ? null : new Date(d));

export function recipientOf(row: LeadContactRow): Recipient {
  return {
    leadId: row.id,
    person: row.person,
    email: row.email,
    linkedinUrl: row.linkedin_url,
    xUserId: row.x_user_id,
    username: row.username,
    sandbox: row.sandbox && typeof row.sandbox === 'object' && !Array.isArray(row.sandbox) ? row.sandbox : null,
    history: {
      invitedAt: date(row.invited_at),
      connectedAt: date(row.connected_at),
      messagedAt: date(row.messaged_at),
      lastMessageChannel: (row.last_message_channel as Channel | null) ?? null,
      followedAt: date(row.followed_at),
      followedBackAt: date(row.followed_back_at),
      repliedAt: date(row.replied_at),
    },
  };
}

export function firstNameOf(person: string | null): string | null {
  const first = person?.trim().split(/\s+/)[0];
  return first ? first : null;
}
