import { sql } from 'kysely';
import type { Database } from '../../../db/database.js';

// The SQL of the IMAP IDLE shard (idle.ts, migration 0051): the listeners alive, and which mailboxes each holds in
// IDLE until when. Listeners serve every workspace, as the inbox loop does: these statements read and write only the
// lease columns, never a tenant's data.

const at = (d: Date) => d.toISOString();

/**
 * Marks `listenerId` alive until `now + leaseSeconds` and forgets listeners whose lease ran out. Answers how many
 * listeners are alive, itself included (at least 1).
 */
export async function beat(db: Database, listenerId: string, now: Date, leaseSeconds: number): Promise<number> {
  const stale = new Date(now.getTime() - leaseSeconds * 1000);
  await db
    .insertInto('inbox_listeners')
    .values({ id: listenerId, seen_at: now })
    .onConflict((oc) => oc.column('id').doUpdateSet({ seen_at: now }))
    .execute();
  await db.deleteFrom('inbox_listeners').where('seen_at', '<', stale).execute();
  const row = await db
    .selectFrom('inbox_listeners')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('seen_at', '>=', stale)
    .executeTakeFirstOrThrow();
  return Math.max(1, Number(row.n));
}

/** Mailboxes a listener may hold in IDLE: an IMAP login that was not refused, on a server not known to lack IDLE. */
export async function countListenable(db: Database): Promise<number> {
  const row = await sql<{ n: string }>`SELECT count(*) AS n FROM mailboxes WHERE ${listenable}`.execute(db);
  return Number(row.rows[0]?.n ?? 0);
}

const listenable = sql`imap_idle IS NOT FALSE AND health <> 'auth_failed'`;

/**
 * Renews the lease of every mailbox `listenerId` still holds (one whose lease ran out may have been taken by another
 * listener: it is not renewed). Answers the ids held now.
 */
export async function renewHeld(db: Database, listenerId: string, now: Date, leaseSeconds: number): Promise<string[]> {
  const until = new Date(now.getTime() + leaseSeconds * 1000);
  const { rows } = await sql<{ id: string }>`
    UPDATE mailboxes SET idle_until = ${at(until)}::timestamptz
    WHERE idle_owner = ${listenerId} AND idle_until > ${at(now)}::timestamptz AND ${listenable}
    RETURNING id`.execute(db);
  return rows.map((r) => r.id);
}

/** Takes up to `limit` mailboxes no live listener holds (SKIP LOCKED across workers), leased to `now + leaseSeconds`. */
export async function claimFree(db: Database, listenerId: string, now: Date, leaseSeconds: number, limit: number): Promise<string[]> {
  if (limit <= 0) return [];
  const until = new Date(now.getTime() + leaseSeconds * 1000);
  const { rows } = await sql<{ id: string }>`
    WITH free AS (
      SELECT id FROM mailboxes WHERE ${listenable} AND (idle_until IS NULL OR idle_until <= ${at(now)}::timestamptz)
      ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED
    )
    UPDATE mailboxes m SET idle_owner = ${listenerId}, idle_until = ${at(until)}::timestamptz
    FROM free WHERE m.id = free.id RETURNING m.id`.execute(db);
  return rows.map((r) => r.id);
}

/**
 * Lets go of mailboxes `listenerId` holds (all of them without `ids`). Each is due for a poll at once, so it is read
 * until another listener holds it.
 */
export async function release(db: Database, listenerId: string, now: Date, ids?: string[]): Promise<void> {
  if (ids && ids.length === 0) return;
  let q = db
    .updateTable('mailboxes')
    .set({ idle_owner: null, idle_until: null, next_poll_at: now as never })
    .where('idle_owner', '=', listenerId);
  if (ids) q = q.where('id', 'in', ids);
  await q.execute();
}

/** The server answered without IDLE: the mailbox is polled only, and let go. */
export async function markWithoutIdle(db: Database, mailboxId: string, now: Date): Promise<void> {
  await db
    .updateTable('mailboxes')
    .set({ imap_idle: false, idle_owner: null, idle_until: null, next_poll_at: now as never })
    .where('id', '=', mailboxId)
    .execute();
}

/** A listener that stops says so: it is no longer counted when the others share the mailboxes. */
export async function forget(db: Database, listenerId: string): Promise<void> {
  await db.deleteFrom('inbox_listeners').where('id', '=', listenerId).execute();
}
