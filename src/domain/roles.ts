import { AppError } from '../lib/errors.js';
import type { Role } from './vocabulary.js';

/**
 * What each workspace role may do (docs/roles.md). Every door names the action of each of its entries (an API
 * route's `config.action`, a console form's, an MCP tool's `action`) and passes this one check; a door entry without
 * an action refuses to register, so nothing is left open by forgetting.
 *
 * The spec gives a workspace `role` (`owner`, `admin`, `member`) and leaves open what each may do (SPEC.md "not
 * shown" item 7). The meanings follow the roles of the peers (Instantly, HeyReach, lemlist, Warmbly): a member works
 * the day's outreach one prospect at a time; an admin may send to many, and connects and configures what the
 * workspace sends through; an owner holds the keys, the Team links and the people who hold the other roles.
 */
export const ACTIONS = {
  // member: read, and act on one prospect or on drafts
  read: { role: 'member', does: 'read anything of the workspace (lists, leads, replies, reports, the event stream)' },
  'publicdata.lookup': { role: 'member', does: 'resolve a public handle and check follower eligibility (spends energy)' },
  'candidates.review': { role: 'member', does: 'import, look up and review candidates of a Play' },
  'leads.write': { role: 'member', does: 'import leads without a live sequence, stop a lead, opt a lead out, merge twins' },
  'leads.enroll_draft': { role: 'member', does: 'put leads into a draft sequence' },
  'tasks.work': { role: 'member', does: 'complete, skip or mark sent the tasks a person must do' },
  'replies.decide': { role: 'member', does: 'decide a reply, including the decisions that message that one prospect' },
  'drafts.write': { role: 'member', does: 'write and preview sequences and Plays (never approves or activates)' },
  'meetings.record': { role: 'member', does: 'record a meeting or its outcome' },
  // admin: send to many, and what the workspace sends through
  'leads.enroll_live': { role: 'admin', does: 'put leads into an active or paused sequence (they may be messaged on the next run)' },
  'sequences.approve': { role: 'admin', does: 'approve a sequence revision' },
  'sequences.set_status': { role: 'admin', does: 'activate, pause or return a sequence to draft' },
  'plays.set_status': { role: 'admin', does: 'activate, pause or archive a Play, or point it at a review API' },
  'accounts.manage': { role: 'admin', does: 'connect, pause, edit and remove accounts and mailboxes (server overrides included)' },
  'settings.manage': { role: 'admin', does: 'change workspace settings (booking link)' },
  'webhooks.manage': { role: 'admin', does: 'create, test and disable webhooks; emit a sample event' },
  'meetings.endpoints': { role: 'admin', does: 'create, rotate, subscribe and remove booking-tool endpoints' },
  'suppressions.remove': { role: 'admin', does: 'take an address off the suppression list' },
  'sessions.end_all': { role: 'admin', does: "end every console session of the workspace (one's own always)" },
  'people.manage': { role: 'admin', does: 'invite, remove and list members' },
  'audit.read': { role: 'admin', does: 'read the audit trail' },
  // owner: keys, Team links, who holds which role
  'keys.manage': { role: 'owner', does: 'create and revoke API keys' },
  'people.manage_admins': { role: 'owner', does: 'give or take the admin and owner roles' },
  'team.manage': { role: 'owner', does: 'link client workspaces to a Team' },
  'workspace.delete': { role: 'owner', does: 'delete the workspace' },
} as const satisfies Record<string, { role: Role; does: string }>;

export type Action = keyof typeof ACTIONS;

/**
 * The security-relevant acts the audit trail records whichever door takes them (docs/roles.md "Audit trail"): what
 * the workspace sends and through what, who may act, and what it tells the outside world. Sign-ins and people are
 * recorded by their services.
 */
export const AUDITED_ACTIONS: ReadonlySet<Action> = new Set<Action>([
  'sequences.approve',
  'sequences.set_status',
  'plays.set_status',
  'accounts.manage',
  'settings.manage',
  'webhooks.manage',
  'meetings.endpoints',
  'suppressions.remove',
  'sessions.end_all',
  'keys.manage',
  'team.manage',
  'workspace.delete',
]);

const RANK: Record<Role, number> = { member: 1, admin: 2, owner: 3 };

export const isAction = (value: string): value is Action => Object.prototype.hasOwnProperty.call(ACTIONS, value);

/** The least role that may take `action`. */
export const requiredRole = (action: Action): Role => ACTIONS[action].role;

/** Whether `role` may take `action` (roles nest: owner ⊃ admin ⊃ member). */
export function roleAllows(role: Role, action: Action): boolean {
  return RANK[role] >= RANK[ACTIONS[action].role];
}

/** The lesser of two roles: a key's role meets a Team link's role in a client workspace. */
export function lesserRole(a: Role, b: Role): Role {
  return RANK[a] <= RANK[b] ? a : b;
}

/**
 * The refusal of `action` to `role`: 403 `forbidden` naming the role needed, with body `{action, requiredRole, role}`
 * besides the error and message.
 */
export function forbiddenAction(role: Role, action: Action): AppError {
  const needed = ACTIONS[action].role;
  return new AppError(403, 'forbidden', `this needs the ${needed} role (${ACTIONS[action].does}); the caller is ${role}`, {
    action,
    requiredRole: needed,
    role,
  });
}

/** The one check: throws forbiddenAction(role, action) unless `role` may take `action`. */
export function assertRoleAllows(role: Role, action: Action): void {
  if (!roleAllows(role, action)) throw forbiddenAction(role, action);
}
