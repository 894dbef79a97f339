import type { Channel, Recipient } from './types.js';
import { givenNameOf } from '../domain/names.js';

const date = (d: Date | string | null) => (d === null ? null : new Date(d));

/** The world file's per-lead script; jsonb comes back parsed, but a JSON text is read too. Anything else: no script. */
function sandboxScript(value: unknown): Record<string, unknown> | null {
  if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  if (typeof value === 'string') {
    try {
      const parsed: unknown = JSON.parse(value);
      return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
    } catch {
      return null;
    }
  }
  return null;
}

export interface RecipientIdentityRow {
  id: string;
  person: string | null;
  email: string | null;
  linkedin_url: string | null;
  x_user_id: string | null;
  username: string | null;
  sandbox: unknown;
}

/** Who an outward action goes to, without the engine's history: what a reply decision sends with. */
export function recipientIdentityOf(row: RecipientIdentityRow): Recipient {
  return {
    leadId: row.id,
    person: row.person,
    email: row.email,
    linkedinUrl: row.linkedin_url,
    xUserId: row.x_user_id,
    username: row.username,
    sandbox: sandboxScript(row.sandbox),
  };
}

/** A lead row as the engine's step claim and watch read it (engine/sql/rows.ts LeadContactRow is one). */
export interface RecipientHistoryRow extends RecipientIdentityRow {
  x_account_user_id: string | null;
  invited_at: Date | string | null;
  connected_at: Date | string | null;
  messaged_at: Date | string | null;
  followed_at: Date | string | null;
  followed_back_at: Date | string | null;
  replied_at: Date | string | null;
  last_message_channel: string | null;
}

/** The recipient of an engine step or watch: who the person is and what the engine has recorded about them so far. */
export function recipientOf(row: RecipientHistoryRow): Recipient {
  return {
    ...recipientIdentityOf(row),
    xAccountUserId: row.x_account_user_id,
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

/**
 * The given name a reply draft greets, by the same rules as {{firstName}} (splitName, domain/names.ts): "Dr. Jane Doe"
 * → "Jane", "Doe, Jane" → "Jane". Null when no given name is known with confidence ("Dr.", "👋", an e-mail address):
 * the draft then greets without a name.
 */
export function firstNameOf(person: string | null): string | null {
  return givenNameOf(person);
}
