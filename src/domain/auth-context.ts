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
}

/** A key (or a console session standing for one) before the workspace selector is applied. */
export interface Caller {
  keyId: string;
  homeWorkspaceId: string;
  /** The role at home (a key's role; a login link's session is an owner, the operator's). */
  role: Role;
}
