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
  role: Role;
}
