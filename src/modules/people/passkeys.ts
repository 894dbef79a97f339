import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { badRequest } from '../../lib/errors.js';
import { isTokenShaped, randomToken, sha256Hex } from '../../lib/ids.js';
import { personActor, type Person } from '../../domain/auth-context.js';
import type { AuditService } from '../audit/index.js';

/** @simplewebauthn/server and its X.509 and ASN.1 stack (about 80 ms to load), loaded by the first passkey act, not at start-up. */
const webauthn = () => import('@simplewebauthn/server');

/** A ceremony's challenge lives 5 minutes and is spent once. */
export const WEBAUTHN_CHALLENGE_TTL_MS = 5 * 60 * 1000;
/** At most this many passkeys per person. */
export const MAX_PASSKEYS = 10;

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

/**
 * Passkeys (WebAuthn, through @simplewebauthn/server; docs/roles.md "Passkeys"). A signed-in person registers one; it
 * then signs them in to the workspace it was registered in, without a link. `origin` is the console's origin (the
 * OUTREACH_PUBLIC_URL origin, else the request's); the relying party id is its host name, so a passkey made for one
 * host never signs in on another. Challenges are kept under the SHA-256 of a ticket the browser holds, spent once.
 */
export function createPasskeysService(deps: { db: Database; clock: Clock; audit: AuditService }) {
  const { db, clock, audit } = deps;
  const rpID = (origin: string) => new URL(origin).hostname;

  async function keepChallenge(challenge: string, person: { id: string; workspaceId: string } | null) {
    const ticket = randomToken(32);
    await db
      .insertInto('webauthn_challenges')
      .values({
        ticket_hash: sha256Hex(ticket),
        challenge,
        person_id: person?.id ?? null,
        workspace_id: person?.workspaceId ?? null,
        expires_at: new Date(clock.now().getTime() + WEBAUTHN_CHALLENGE_TTL_MS),
      })
      .execute();
    await db.deleteFrom('webauthn_challenges').where('expires_at', '<=', clock.now()).execute();
    return ticket;
  }

  async function spendChallenge(ticket: string | undefined) {
    if (!isTokenShaped(ticket)) return undefined;
    return db
      .deleteFrom('webauthn_challenges')
      .where('ticket_hash', '=', sha256Hex(ticket))
      .where('expires_at', '>', clock.now())
      .returning(['challenge', 'person_id', 'workspace_id'])
      .executeTakeFirst();
  }

  /** The options a signed-in person's browser creates a passkey with, and the ticket that holds the challenge. */
  async function registrationOptions(person: Person, workspaceId: string, origin: string) {
    const existing = await db.selectFrom('passkeys').select(['id', 'transports']).where('person_id', '=', person.id).execute();
    if (existing.length >= MAX_PASSKEYS) throw badRequest('too_many_passkeys', `a person may have at most ${MAX_PASSKEYS} passkeys`);
    const { generateRegistrationOptions } = await webauthn();
    const options = await generateRegistrationOptions({
      rpName: 'Outreach console',
      rpID: rpID(origin),
      userName: person.email,
      userDisplayName: person.name,
      userID: new TextEncoder().encode(person.id),
      attestationType: 'none',
      excludeCredentials: existing.map((p) => ({ id: p.id, transports: p.transports as never })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    });
    return { options, ticket: await keepChallenge(options.challenge, { id: person.id, workspaceId }) };
  }

  /** Verifies the browser's new credential against the ticket's challenge and keeps it. 400 `passkey_not_verified`. */
  async function register(person: Person, ticket: string | undefined, response: unknown, origin: string) {
    const held = await spendChallenge(ticket);
    if (!held || held.person_id !== person.id || !held.workspace_id)
      throw badRequest('passkey_not_verified', 'the passkey ceremony expired or was not started here; try again');
    const { verifyRegistrationResponse } = await webauthn();
    const verification = await verifyRegistrationResponse({
      response: response as RegistrationResponseJSON,
      expectedChallenge: held.challenge,
      expectedOrigin: new URL(origin).origin,
      expectedRPID: rpID(origin),
      requireUserVerification: false,
    }).catch(() => ({ verified: false as const, registrationInfo: undefined }));
    if (!verification.verified || !verification.registrationInfo) throw badRequest('passkey_not_verified', 'the browser’s passkey could not be verified');
    const c = verification.registrationInfo.credential;
    await db
      .insertInto('passkeys')
      .values({
        id: c.id,
        person_id: person.id,
        workspace_id: held.workspace_id,
        public_key: b64(c.publicKey),
        counter: c.counter,
        transports: c.transports ?? [],
      })
      .execute();
    await audit.record(held.workspace_id, personActor(person), 'person.passkey_added', person.email, {});
    return { id: c.id };
  }

  /** The options of a sign-in with any passkey of this host (discoverable credentials), and the ticket. */
  async function signInOptions(origin: string) {
    const { generateAuthenticationOptions } = await webauthn();
    const options = await generateAuthenticationOptions({ rpID: rpID(origin), userVerification: 'preferred' });
    return { options, ticket: await keepChallenge(options.challenge, null) };
  }

  /**
   * Verifies a passkey's assertion: answers the person and the workspace it signs in to, or null (unknown passkey, a
   * failed signature, a replayed counter, a person no longer a member there). Never says which.
   */
  async function signIn(ticket: string | undefined, response: unknown, origin: string): Promise<{ person: Person; workspaceId: string } | null> {
    const held = await spendChallenge(ticket);
    const r = response as AuthenticationResponseJSON | null;
    if (!held || !r || typeof r.id !== 'string') return null;
    const key = await db
      .selectFrom('passkeys as k')
      .innerJoin('people as p', 'p.id', 'k.person_id')
      .innerJoin('workspace_members as m', (j) => j.onRef('m.person_id', '=', 'k.person_id').onRef('m.workspace_id', '=', 'k.workspace_id'))
      .select(['k.id', 'k.public_key', 'k.counter', 'k.transports', 'k.workspace_id', 'p.id as person_id', 'p.email', 'p.name'])
      .where('k.id', '=', r.id)
      .executeTakeFirst();
    if (!key) return null;
    const { verifyAuthenticationResponse } = await webauthn();
    const verification = await verifyAuthenticationResponse({
      response: r,
      expectedChallenge: held.challenge,
      expectedOrigin: new URL(origin).origin,
      expectedRPID: rpID(origin),
      credential: {
        id: key.id,
        publicKey: new Uint8Array(Buffer.from(key.public_key, 'base64url')),
        counter: Number(key.counter),
        transports: key.transports,
      },
      requireUserVerification: false,
    }).catch(() => null);
    if (!verification?.verified) return null;
    await db.updateTable('passkeys').set({ counter: verification.authenticationInfo.newCounter, last_used_at: clock.now() }).where('id', '=', key.id).execute();
    const person = { id: key.person_id, email: key.email, name: key.name };
    await audit.record(key.workspace_id, personActor(person), 'person.signed_in', person.email, { with: 'passkey' });
    return { person, workspaceId: key.workspace_id };
  }

  /** A person's passkeys: `[{id, createdAt, lastUsedAt}]`. */
  async function list(personId: string) {
    const rows = await db.selectFrom('passkeys').select(['id', 'created_at', 'last_used_at']).where('person_id', '=', personId).orderBy('created_at').execute();
    return rows.map((r) => ({ id: r.id, createdAt: r.created_at.toISOString(), lastUsedAt: r.last_used_at?.toISOString() ?? null }));
  }

  return { registrationOptions, register, signInOptions, signIn, list };
}

export type PasskeysService = ReturnType<typeof createPasskeysService>;
