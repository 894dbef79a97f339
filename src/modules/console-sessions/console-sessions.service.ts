import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { TextCipher } from '../../lib/crypto.js';
import { isTokenShaped, isUuid, randomToken, sha256Hex } from '../../lib/ids.js';
import { notFound } from '../../lib/errors.js';
import type { AuthContext, WorkspacesService } from '../workspaces/index.js';
import { keyActor, OPERATOR, OPERATOR_SESSION_KEY, type Caller } from '../../domain/auth-context.js';
import type { PeopleService } from '../people/index.js';
import type { AuditService } from '../audit/index.js';
import * as repo from './console-sessions.repository.js';

/** A console session lasts 12 hours from sign-in (issue 15), whatever the activity. */
export const CONSOLE_SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/**
 * A session from a login link has no key whose revocation could end it: it ends 12 hours after sign-in at the
 * latest (checked against its start, whatever its expiry says), or with "Sign out everywhere".
 */
export const LINK_SESSION_MAX_AGE_MS = 12 * 60 * 60 * 1000;
/** `outreach login-link` links work once, within 10 minutes. */
export const LOGIN_LINK_TTL_MS = 10 * 60 * 1000;

/** Who decided, in a review made by a session that signed in through a login link (it has no key id). */
export const LINK_SESSION_REVIEWER = OPERATOR_SESSION_KEY;

/** What a signed-in console request knows: the API's AuthContext plus the session's own id hash. */
export interface ConsoleSession {
  idHash: string;
  auth: AuthContext;
  /** The workspace the session signed in to (a Team owner's home); the switcher lists its client workspaces. */
  homeWorkspaceId: string;
}

/**
 * Console sign-in. The browser only ever holds an opaque random session id; the database holds its SHA-256.
 * Keys are checked by the same workspaces service the API uses, and a session is re-checked against its key on
 * every request, so a revoked or expired key ends the session at the next page.
 */
export function createConsoleSessionsService(deps: {
  db: Database;
  clock: Clock;
  workspaces: WorkspacesService;
  cipher: TextCipher;
  people: PeopleService;
  audit: AuditService;
}) {
  const { db, clock, workspaces, people, audit } = deps;

  async function start(workspaceId: string, keyId: string | null, personId: string | null = null) {
    const sessionId = randomToken(32);
    const now = clock.now();
    const ttl = keyId === null ? Math.min(CONSOLE_SESSION_TTL_MS, LINK_SESSION_MAX_AGE_MS) : CONSOLE_SESSION_TTL_MS;
    const expiresAt = new Date(now.getTime() + ttl);
    await repo.insertSession(db, {
      id_hash: sha256Hex(sessionId),
      workspace_id: workspaceId,
      key_id: keyId,
      person_id: personId,
      created_at: now,
      expires_at: expiresAt,
    });
    return { sessionId, expiresAt };
  }

  /** Opens a session for a person a passkey (or another verified ceremony) named, in that workspace. */
  async function startPersonSession(person: { id: string }, workspaceId: string) {
    return start(workspaceId, null, person.id);
  }

  /**
   * A person's invitation or sign-in link (docs/roles.md "People"): spends it and opens a session as that person, with
   * their role. Answers null for a link that is unknown, used, expired, or whose person is no longer a member.
   */
  async function signInPerson(token: string, name?: string) {
    const redeemed = await people.redeem(token, name);
    if (!redeemed) return null;
    return { ...(await startPersonSession(redeemed.person, redeemed.workspaceId)), person: redeemed.person };
  }

  /** A key typed into the sign-in form; answers null for any key the API would refuse (the caller shows 401). */
  async function signInWithKey(secret: string) {
    const key = await workspaces.authenticate(`Bearer ${secret.trim()}`).catch(() => null);
    if (!key) return null;
    // Now and then, forget ended sessions (no separate sweeper for a table this small).
    await repo.deleteDeadSessions(db, clock.now());
    await audit.record(key.homeWorkspaceId, keyActor(key.keyId), 'console.signed_in', null, { with: 'key', role: key.role });
    return start(key.homeWorkspaceId, key.keyId);
  }

  async function createLoginLink(workspaceId: string) {
    if (!isUuid(workspaceId)) throw notFound('workspace');
    const list = await workspaces.listWorkspaces(workspaceId.toLowerCase()).catch(() => []);
    if (!list.some((w) => w.id === workspaceId.toLowerCase())) throw notFound('workspace');
    const token = randomToken(32);
    const expiresAt = new Date(clock.now().getTime() + LOGIN_LINK_TTL_MS);
    await repo.insertLoginLink(db, { token_hash: sha256Hex(token), workspace_id: workspaceId.toLowerCase(), expires_at: expiresAt });
    return { token, path: `/console/login/${token}`, workspaceId: workspaceId.toLowerCase(), expiresAt: expiresAt.toISOString() };
  }

  /** Redeems a login link once; answers null when it is unknown, used or expired. */
  async function signInWithLink(token: string) {
    if (!isTokenShaped(token)) return null;
    const link = await repo.consumeLoginLink(db, sha256Hex(token), clock.now());
    if (!link) return null;
    await audit.record(link.workspace_id, OPERATOR, 'console.signed_in', null, { with: 'login_link' });
    return start(link.workspace_id, null);
  }

  /** The session behind a cookie value, or null when it is unknown, expired, or its key is revoked or expired. */
  async function resume(sessionId: string | undefined): Promise<ConsoleSession | null> {
    if (!sessionId || sessionId.length > 100) return null;
    const idHash = sha256Hex(sessionId);
    const row = await repo.findSessionWithKey(db, idHash);
    const now = clock.now().getTime();
    if (!row) return null;
    if (row.expires_at.getTime() <= now || (row.key_id === null && row.created_at.getTime() + LINK_SESSION_MAX_AGE_MS <= now)) {
      await repo.deleteSession(db, idHash);
      return null;
    }
    const who = await callerOf(row, now);
    if (!who) return null;
    // The X-Workspace-Client rules: the home workspace, or a client workspace the Team link still allows, where the
    // caller acts with the lesser of its role and the link's.
    const { caller, person } = who;
    const auth = await workspaces.selectWorkspace(caller, row.selected_workspace_id ?? undefined).catch(() => workspaces.selectWorkspace(caller, undefined));
    return { idHash, auth: person ? { ...auth, person } : auth, homeWorkspaceId: row.workspace_id };
  }

  /**
   * Who a live session stands for, read afresh on every request; null (and the sessions deleted) when that is gone:
   * - a person: their role in the workspace; removed, they are signed out here;
   * - a key: the key's role; its revocation or expiry ends every session it opened, not only this one (the key row
   *   exists while the session does, ON DELETE CASCADE);
   * - a login link's session: the operator's, an owner (docs/roles.md).
   */
  async function callerOf(row: NonNullable<Awaited<ReturnType<typeof repo.findSessionWithKey>>>, now: number) {
    if (row.person_id !== null) {
      const member = await people.membership(row.workspace_id, row.person_id);
      if (!member) {
        await repo.deleteSession(db, row.id_hash);
        return null;
      }
      const { role, ...person } = member;
      return { caller: { keyId: `person:${person.id}`, homeWorkspaceId: row.workspace_id, role } satisfies Caller, person };
    }
    if (row.key_id !== null && (row.key_revoked_at || (row.key_expires_at && row.key_expires_at.getTime() <= now))) {
      await repo.deleteKeySessions(db, row.key_id);
      return null;
    }
    const caller: Caller = { keyId: row.key_id ?? LINK_SESSION_REVIEWER, homeWorkspaceId: row.workspace_id, role: row.key_role ?? 'owner' };
    return { caller, person: undefined };
  }

  async function end(session: ConsoleSession) {
    await repo.deleteSession(db, session.idHash);
  }

  /**
   * "Sign out everywhere": ends every console session signed in to this session's home workspace, whichever key
   * opened it, login-link sessions included (they have no key to revoke). Answers how many ended.
   */
  async function endAll(session: ConsoleSession): Promise<number> {
    return repo.deleteWorkspaceSessions(db, session.homeWorkspaceId);
  }

  /**
   * `outreach sessions revoke`: ends every console session signed in to a workspace (key and login-link sessions), or
   * with `keyId` those one key of that workspace opened. 404 `workspace` or `key` for an unknown id, or a key of
   * another workspace. Answers how many ended.
   */
  async function revokeSessions(input: {
    workspaceId: string;
    keyId?: string | null;
    person?: string | null;
  }): Promise<{ workspaceId: string; keyId: string | null; ended: number; person?: string }> {
    const workspaceId = input.workspaceId.toLowerCase();
    if (!isUuid(workspaceId) || (await workspaces.workspaceName(workspaceId)) === null) throw notFound('workspace');
    if (input.person) {
      const person = await people.findByEmail(workspaceId, input.person);
      if (!person) throw notFound('person');
      return { workspaceId, keyId: null, person: person.email, ended: await people.endSessions(workspaceId, person.id) };
    }
    if (!input.keyId) return { workspaceId, keyId: null, ended: await repo.deleteWorkspaceSessions(db, workspaceId) };
    const keyId = input.keyId.toLowerCase();
    if (!isUuid(keyId)) throw notFound('key');
    const ended = await repo.deleteKeySessionsInWorkspace(db, workspaceId, keyId);
    if (ended === null) throw notFound('key');
    return { workspaceId, keyId, ended };
  }

  /**
   * Ends every console session a key opened. A revoked or expired key's sessions are refused on their next request
   * anyway (resume re-reads the key); whoever revokes a key calls this so none of them is left in the table.
   */
  async function endSessionsOfKey(keyId: string): Promise<number> {
    if (!isUuid(keyId)) return 0;
    return repo.deleteKeySessions(db, keyId.toLowerCase());
  }

  /**
   * The key that binds a console CSRF token to its session (HMAC key of @fastify/csrf): derived from the encryption
   * key, so every process sharing the database and key accepts the tokens the others minted.
   */
  function csrfHmacKey(): string {
    return deps.cipher.sign('console-csrf', 'hmac-key v1');
  }

  /** Switches to a client workspace with X-Workspace-Client's rules (400/403 as the API answers). */
  async function switchWorkspace(session: ConsoleSession, workspaceId: string) {
    const key: Caller = { keyId: session.auth.keyId, homeWorkspaceId: session.homeWorkspaceId, role: session.auth.homeRole };
    const auth = { ...(await workspaces.selectWorkspace(key, workspaceId)), ...(session.auth.person && { person: session.auth.person }) };
    await repo.setSelectedWorkspace(db, session.idHash, auth.workspaceId === session.homeWorkspaceId ? null : auth.workspaceId);
    return auth;
  }

  /** The home workspace and the client workspaces a Team owner's session may switch to. */
  async function switchableWorkspaces(session: ConsoleSession) {
    return workspaces.listWorkspaces(session.homeWorkspaceId, session.auth.homeRole);
  }

  return {
    signInWithKey,
    signInWithLink,
    signInPerson,
    startPersonSession,
    createLoginLink,
    resume,
    end,
    endAll,
    endSessionsOfKey,
    revokeSessions,
    csrfHmacKey,
    switchWorkspace,
    switchableWorkspaces,
  };
}

export type ConsoleSessionsService = ReturnType<typeof createConsoleSessionsService>;
