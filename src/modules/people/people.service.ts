import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, badRequest, conflict, notFound } from '../../lib/errors.js';
import { isTokenShaped, isUuid, newId, randomToken, sha256Hex } from '../../lib/ids.js';
import { assertRoleAllows } from '../../domain/roles.js';
import { ROLES, inWords, isRole, type Role } from '../../domain/vocabulary.js';
import { OPERATOR, personActor, type Actor, type Person } from '../../domain/auth-context.js';
import type { AuditService } from '../audit/index.js';
import * as repo from './people.repository.js';

/** An invitation works once, within 7 days; a person's sign-in link once, within 15 minutes. */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
export const PERSON_SIGN_IN_TTL_MS = 15 * 60 * 1000;
/** The path a person's one-time link opens (an invitation or a sign-in). */
export const JOIN_PATH = '/console/join';

/** What `outreach person …` asks (docs/roles.md "People"). */
export type PeopleCommand =
  | { op: 'invite'; workspaceId: string; email: string; role?: string; name?: string }
  | { op: 'list'; workspaceId: string }
  | { op: 'role'; workspaceId: string; email: string; role: string }
  | { op: 'remove'; workspaceId: string; email: string }
  | { op: 'link'; workspaceId: string; email: string };

/** Who acts on people, and with which role in the workspace (the operator is an owner). */
export interface PeopleActor {
  actor: Actor;
  role: Role;
}

const EMAIL = /^[^\s@<>()[\],;:"]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)+$/;

/** A person's address, checked and kept in lower case: one person per address, however it is typed. */
function checkEmail(email: string): string {
  const e = email.trim().toLowerCase();
  if (e.length > 254 || !EMAIL.test(e)) throw badRequest('invalid_request', `email: "${e.slice(0, 80)}" is not an e-mail address`, { field: 'email' });
  return e;
}

function checkName(name: string | undefined, fallback: string): string {
  const n = (name ?? '').trim().replace(/\s+/g, ' ');
  if (n.length > 120) throw badRequest('invalid_request', 'name: at most 120 characters', { field: 'name' });
  return n || fallback;
}

/**
 * People of a workspace (docs/roles.md "People"): invited by a one-time link, signed in as themselves, each with a
 * role. An admin manages members; an owner also manages admins and owners (`people.manage` / `people.manage_admins`).
 * A workspace that has people always keeps at least one owner among them (409 `last_owner`). Every change is in the
 * audit trail, in the same transaction.
 */
export function createPeopleService(deps: { db: Database; clock: Clock; audit: AuditService }) {
  const { db, clock, audit } = deps;

  const manageAction = (...roles: (Role | null | undefined)[]) => (roles.every((r) => !r || r === 'member') ? 'people.manage' : 'people.manage_admins');

  /**
   * A one-time link (an invitation for 7 days, a sign-in for 15 minutes): `{token, path, expiresAt}`; only the token's
   * SHA-256 is stored.
   */
  async function issueLink(q: Database, l: { purpose: 'invite' | 'sign_in'; workspaceId: string; email: string; role: Role | null; by: PeopleActor }) {
    const token = randomToken(32);
    const expiresAt = new Date(clock.now().getTime() + (l.purpose === 'invite' ? INVITATION_TTL_MS : PERSON_SIGN_IN_TTL_MS));
    await repo.insertLink(q, {
      token_hash: sha256Hex(token),
      purpose: l.purpose,
      workspace_id: l.workspaceId,
      email: l.email,
      role: l.role,
      created_by: l.by.actor.label,
      expires_at: expiresAt,
    });
    return { token, path: `${JOIN_PATH}/${token}`, expiresAt: expiresAt.toISOString() };
  }

  async function memberOrThrow(trx: Database, workspaceId: string, personId: string) {
    const m = isUuid(personId) ? await repo.findMember(trx, workspaceId, personId.toLowerCase()) : undefined;
    if (!m) throw notFound('person');
    return m;
  }

  /**
   * An invitation: `{email, role, token, path, expiresAt}`. The token is shown once (only its SHA-256 is kept). 400
   * naming `email` or `role`; 403 `forbidden` when the actor may not give that role; 409 `already_member`.
   */
  async function invite(workspaceId: string, input: { email: string; role: string; name?: string }, by: PeopleActor) {
    const email = checkEmail(input.email);
    if (!isRole(input.role)) throw badRequest('invalid_request', `role: must be ${inWords(ROLES)}`, { field: 'role', allowed: ROLES });
    const role = input.role;
    assertRoleAllows(by.role, manageAction(role));
    return db.transaction().execute(async (trx) => {
      const person = await repo.findPersonByEmail(trx, email);
      if (person && (await repo.findMember(trx, workspaceId, person.id))) {
        throw conflict('already_member', `${email} is already a member of this workspace; change their role instead`);
      }
      const link = await issueLink(trx, { purpose: 'invite', workspaceId, email, role, by });
      await audit.record(workspaceId, by.actor, 'person.invited', email, { role }, trx);
      return { email, role, ...link };
    });
  }

  /** A member's one-time sign-in link (15 minutes): `{email, token, path, expiresAt}`. 404 `person` for a non-member. */
  async function signInLink(workspaceId: string, email: string, by: PeopleActor) {
    const person = await repo.findPersonByEmail(db, checkEmail(email));
    if (!person || !(await repo.findMember(db, workspaceId, person.id))) throw notFound('person');
    return { email: person.email, ...(await issueLink(db, { purpose: 'sign_in', workspaceId, email: person.email, role: null, by })) };
  }

  /** What a link's landing page says (who, where, which role) without spending it; null when unknown, used or expired. */
  async function describeLink(token: string) {
    if (!isTokenShaped(token)) return null;
    const link = await repo.peekLink(db, sha256Hex(token), clock.now());
    return link ? { purpose: link.purpose, email: link.email, role: link.role, workspaceName: link.workspace_name } : null;
  }

  /**
   * Spends a link: an invitation makes the person (named `name`, else the address's local part) a member with its
   * role; a sign-in link needs them still a member. Answers `{person, workspaceId}`, or null for an unknown, used or
   * expired link, or a person no longer a member.
   */
  async function redeem(token: string, name?: string): Promise<{ person: Person; workspaceId: string } | null> {
    if (!isTokenShaped(token)) return null;
    return db.transaction().execute(async (trx) => {
      const link = await repo.consumeLink(trx, sha256Hex(token), clock.now());
      if (!link) return null;
      let person = await repo.findPersonByEmail(trx, link.email);
      if (link.purpose === 'invite') {
        const given = checkName(name, person?.name ?? link.email.split('@')[0]);
        if (!person) {
          person = { id: newId(), email: link.email, name: given };
          await repo.insertPerson(trx, person);
        } else if (name && given !== person.name) {
          await repo.setPersonName(trx, person.id, given);
          person = { ...person, name: given };
        }
        await repo.upsertMember(trx, { workspace_id: link.workspace_id, person_id: person.id, role: link.role ?? 'member' });
        await audit.record(link.workspace_id, personActor(person), 'person.joined', person.email, { role: link.role }, trx);
      } else if (!person || !(await repo.findMember(trx, link.workspace_id, person.id))) {
        return null;
      }
      await audit.record(
        link.workspace_id,
        personActor(person),
        'person.signed_in',
        person.email,
        { with: link.purpose === 'invite' ? 'invitation' : 'link' },
        trx,
      );
      return { person, workspaceId: link.workspace_id };
    });
  }

  /** The workspace's people: `[{id, email, name, role, since}]`, by name. */
  async function list(workspaceId: string) {
    const rows = await repo.listMembers(db, workspaceId);
    return rows.map((r) => ({ id: r.id, email: r.email, name: r.name, role: r.role, since: r.created_at.toISOString() }));
  }

  /** A person's membership (who and their role), or null; read on every console request of their session. */
  async function membership(workspaceId: string, personId: string): Promise<(Person & { role: Role }) | null> {
    const m = await repo.findMember(db, workspaceId, personId);
    return m ? { id: m.id, email: m.email, name: m.name, role: m.role } : null;
  }

  async function findByEmail(workspaceId: string, email: string) {
    const p = await repo.findPersonByEmail(db, email.trim());
    return p && (await repo.findMember(db, workspaceId, p.id)) ? p : null;
  }

  /** Gives a member another role; their sessions end (they sign in again with it). 409 `last_owner`. */
  async function setRole(workspaceId: string, personId: string, role: string, by: PeopleActor) {
    if (!isRole(role)) throw badRequest('invalid_request', `role: must be ${inWords(ROLES)}`, { field: 'role', allowed: ROLES });
    return db.transaction().execute(async (trx) => {
      const owners = await repo.lockOwners(trx, workspaceId);
      const m = await memberOrThrow(trx, workspaceId, personId);
      assertRoleAllows(by.role, manageAction(m.role, role));
      if (m.role === role) return { id: m.id, email: m.email, role, changed: false };
      if (m.role === 'owner' && owners <= 1) throw lastOwner(m.email);
      await repo.upsertMember(trx, { workspace_id: workspaceId, person_id: m.id, role });
      await repo.deletePersonSessions(trx, workspaceId, m.id);
      await audit.record(workspaceId, by.actor, 'person.role_changed', m.email, { from: m.role, to: role }, trx);
      return { id: m.id, email: m.email, role, changed: true };
    });
  }

  /** Removes a member; their sessions end at once. 409 `last_owner`. */
  async function remove(workspaceId: string, personId: string, by: PeopleActor) {
    return db.transaction().execute(async (trx) => {
      const owners = await repo.lockOwners(trx, workspaceId);
      const m = await memberOrThrow(trx, workspaceId, personId);
      assertRoleAllows(by.role, manageAction(m.role));
      if (m.role === 'owner' && owners <= 1) throw lastOwner(m.email);
      await repo.deleteMember(trx, workspaceId, m.id);
      const ended = await repo.deletePersonSessions(trx, workspaceId, m.id);
      await audit.record(workspaceId, by.actor, 'person.removed', m.email, { role: m.role, sessionsEnded: ended }, trx);
      return { id: m.id, email: m.email, removed: true };
    });
  }

  /** Ends a person's console sessions in the workspace (`outreach sessions revoke --person`). */
  async function endSessions(workspaceId: string, personId: string) {
    return repo.deletePersonSessions(db, workspaceId, personId);
  }

  /**
   * `outreach person …` (the CLI on the server's data, or the admin route it calls): the operator acts as an owner.
   * People are named by e-mail address; 404 `person` for one who is not a member.
   */
  async function operatorCommand(cmd: PeopleCommand) {
    const by: PeopleActor = { actor: OPERATOR, role: 'owner' };
    const ws = cmd.workspaceId.toLowerCase();
    if (!isUuid(ws) || !(await repo.workspaceExists(db, ws))) throw notFound('workspace');
    const member = async (email: string) => {
      const p = await findByEmail(ws, email);
      if (!p) throw notFound('person');
      return p.id;
    };
    switch (cmd.op) {
      case 'invite':
        return invite(ws, { email: cmd.email, role: cmd.role ?? 'member', name: cmd.name }, by);
      case 'list':
        return { people: await list(ws) };
      case 'role':
        return setRole(ws, await member(cmd.email), cmd.role, by);
      case 'remove':
        return remove(ws, await member(cmd.email), by);
      case 'link':
        return signInLink(ws, cmd.email, by);
    }
  }

  return { invite, signInLink, describeLink, redeem, list, membership, findByEmail, setRole, remove, endSessions, operatorCommand };
}

const lastOwner = (email: string) =>
  new AppError(409, 'last_owner', `${email} is the workspace's last owner: make someone else an owner first`, { field: 'role' });

export type PeopleService = ReturnType<typeof createPeopleService>;
