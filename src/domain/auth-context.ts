import type { Role } from './vocabulary.js';

/**
 * Who is calling, after the key is checked and the workspace selector applied (modules/workspaces authenticates; the
 * app hangs it on each request). Here, below both, so the app's request type and the module share it without an
 * import circle.
 */
export interface AuthContext {
  keyId: string;
  homeWorkspaceId: string;
  workspaceId: string;
  /** The caller's role in `workspaceId`: the key's (or session's) role, lowered to the Team link's in a client workspace. */
  role: Role;
  /** The caller's own role at home (what GET /workspaces lowers per client workspace). */
  homeRole: Role;
  /** The person signed in to the console (an invitation or their sign-in link); absent for keys and the operator. */
  person?: Person;
}

export interface Person {
  id: string;
  name: string;
  email: string;
}

/**
 * Who made a write, as the audit trail and `by` labels name them: a person, a key (by id), the operator (the CLI
 * on the server's data, a login-link session) or the engine.
 */
export type Actor =
  | { kind: 'person'; id: string; label: string }
  | { kind: 'key'; id: string; label: string }
  | { kind: 'operator'; id: null; label: 'operator' }
  | { kind: 'engine'; id: null; label: 'engine' };

export const OPERATOR: Actor = { kind: 'operator', id: null, label: 'operator' };

/** The key id a login-link (operator) session carries in place of a key. */
export const OPERATOR_SESSION_KEY = 'console';

/** A person as the audit trail names them: `Name <address>`. */
export const personActor = (p: Person): Actor => ({ kind: 'person', id: p.id, label: `${p.name} <${p.email}>` });

/** A key as the audit trail names it: `key <id>`. */
export const keyActor = (keyId: string): Actor => ({ kind: 'key', id: keyId, label: `key ${keyId}` });

/** The actor behind a request: its person, else its key, else the operator (a login-link session). */
export function actorOf(auth: AuthContext): Actor {
  if (auth.person) return personActor(auth.person);
  return auth.keyId === OPERATOR_SESSION_KEY ? OPERATOR : keyActor(auth.keyId);
}

/** A key (or a console session standing for one) before the workspace selector is applied. */
export interface Caller {
  keyId: string;
  homeWorkspaceId: string;
  /** The role at home (a key's role; a login link's session is an owner, the operator's). */
  role: Role;
}
