import type { Role } from '../domain/vocabulary.js';
import type { CreatedAt, Int8, Json, Timestamp } from './schema-columns.js';

// People, their memberships, links, passkeys and the audit trail (migrations 0047, 0048), kept apart from schema.ts.

export interface PeopleTable {
  id: string;
  email: string;
  name: string;
  created_at: CreatedAt;
}

export interface WorkspaceMembersTable {
  workspace_id: string;
  person_id: string;
  role: Role;
  created_at: CreatedAt;
}

export interface PersonLinksTable {
  token_hash: string;
  purpose: 'invite' | 'sign_in';
  workspace_id: string;
  email: string;
  role: Role | null;
  created_by: string;
  created_at: CreatedAt;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

export interface PasskeysTable {
  id: string;
  person_id: string;
  workspace_id: string;
  public_key: string;
  counter: Int8;
  transports: string[];
  created_at: CreatedAt;
  last_used_at: Timestamp | null;
}

export interface WebauthnChallengesTable {
  ticket_hash: string;
  challenge: string;
  person_id: string | null;
  workspace_id: string | null;
  expires_at: Timestamp;
}

export interface AuditEventsTable {
  workspace_id: string;
  id: string;
  at: Timestamp;
  actor_kind: 'person' | 'key' | 'operator' | 'engine';
  actor_id: string | null;
  actor_label: string;
  action: string;
  subject: string | null;
  detail: Json<Record<string, unknown>>;
}
