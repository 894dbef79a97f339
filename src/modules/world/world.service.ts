import { seedMailbox } from '../../channels/email/index.js';
import { xOauthRepository } from '../../channels/x/index.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { AppError, conflict } from '../../lib/errors.js';
import { compileStrict } from '../../app/validation.js';
import type { Database } from '../../db/database.js';
import type { TextCipher } from '../../lib/crypto.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { invalidWorld, planWorld, type Item, type Plan, type Row } from './planners/index.js';
import { reconcile } from './world.reconcile.js';
import * as repo from './world.repository.js';
import { WorldFile, type SeedResult } from './world.schemas.js';

let validator: ValidateFunction | null = null;

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Ajv reports a failed nullable field as one error per anyOf branch plus the anyOf itself; the useful
 * one is the deepest error that is not "must be null" (an object branch reports the bad inner field).
 */
function firstProblem(errors: ErrorObject[]): { path: string; message: string } {
  const located = errors.map((e) => {
    const p = e.params as Record<string, unknown>;
    if (e.keyword === 'additionalProperties')
      return { path: `${e.instancePath}/${escapePointer(String(p.additionalProperty))}`, message: 'is not a known field', e };
    if (e.keyword === 'required') return { path: `${e.instancePath}/${escapePointer(String(p.missingProperty))}`, message: 'is required', e };
    if (e.keyword === 'enum') return { path: e.instancePath, message: `must be one of: ${(p.allowedValues as unknown[]).join(', ')}`, e };
    if (e.keyword === 'const') return { path: e.instancePath, message: `must be ${JSON.stringify(p.allowedValue)}`, e };
    return { path: e.instancePath, message: e.message ?? 'is invalid', e };
  });
  const specific = located.filter(({ e }) => e.keyword !== 'anyOf' && !(e.keyword === 'type' && (e.params as { type?: string }).type === 'null'));
  const pool = specific.length > 0 ? specific : located;
  if (pool.length === 0) return { path: '', message: 'is not a valid world file' };
  const depth = (path: string) => path.split('/').length;
  const best = pool.reduce((a, b) => (depth(b.path) > depth(a.path) ? b : a));
  return { path: best.path, message: best.message };
}

/** Inserts what is not saved yet, parents first; a Play's new candidates share one `seed` batch. */
async function write(db: Database, cipher: TextCipher, plan: Plan, now: Date): Promise<SeedResult['counts']> {
  const fresh = <R>(items: Item<R>[]) => items.filter((i) => !i.existing).map((i) => i.row);
  await repo.insertWorkspaces(
    db,
    plan.workspaces.filter((w) => !w.existing).map((w) => w.row),
  );
  await repo.insertTeamLinks(db, plan.teamLinks);
  await repo.insertApiKeys(
    db,
    plan.workspaces.flatMap((w) => w.keys.filter((k) => !k.existing).map((k) => k.row)),
  );
  await repo.insertXAccounts(
    db,
    plan.xAccounts.map((x) => x.row),
  );
  // Seeded OAuth tokens: the account is served by the real X driver (encrypted like a connected account's).
  const xTokens = xOauthRepository(cipher);
  for (const x of plan.xAccounts) if (x.oauth) await xTokens.save(db, x.ws.id, x.row.user_id, x.oauth);
  await repo.insertMessagingAccounts(db, fresh(plan.accounts));
  const freshAccounts = new Set(fresh(plan.accounts).map((a) => a.id));
  for (const m of plan.mailboxes.filter((x) => freshAccounts.has(x.accountId))) {
    await seedMailbox(db, cipher, { id: `mbx_${newId()}`, workspaceId: m.workspaceId, accountId: m.accountId, ...m.input });
  }
  const sequences = fresh(plan.sequences);
  await repo.insertSequences(db, sequences);
  const plays = fresh(plan.plays);
  await repo.insertPlays(db, plays);

  const newCandidates = plan.candidates.filter((c) => !c.existing);
  const batches = new Map<string, Row<'candidate_batches'>>();
  for (const c of newCandidates) {
    let batch = batches.get(c.play.id);
    if (!batch) {
      batch = { id: newId(), workspace_id: c.ws.id, play_id: c.play.id, source: 'seed', request_id: null, created_at: now };
      batches.set(c.play.id, batch);
    }
    c.row.batch_id = batch.id;
  }
  await repo.insertCandidateBatches(db, [...batches.values()]);
  await repo.insertCandidates(
    db,
    newCandidates.map((c) => c.row),
  );

  const leads = fresh(plan.leads);
  await repo.insertLeads(db, leads);
  const replies = fresh(plan.replies);
  await repo.insertReplies(db, cipher, replies);
  const activity = fresh(plan.activity);
  await repo.insertActivity(db, activity);
  await repo.upsertPublicData(db, plan.publicData);
  return {
    sequences: sequences.length,
    plays: plays.length,
    candidates: newCandidates.length,
    leads: leads.length,
    replies: replies.length,
    activity: activity.length,
  };
}

/** What the world loader needs (a module takes its own dependencies; it never imports the app's composition root). */
export interface WorldServiceDeps {
  db: Database;
  clock: Clock;
  cipher: TextCipher;
}

export function createWorldService({ db, clock, cipher }: WorldServiceDeps) {
  /** Loads a world file (shared/contracts/world-file.md) in one transaction: all of it or nothing. */
  async function seed(input: unknown): Promise<SeedResult> {
    // Validation fills defaults into the document; the caller's object stays as it was given.
    const doc = structuredClone(input);
    validator ??= compileStrict(WorldFile);
    if (!validator(doc)) {
      const problem = firstProblem(validator.errors ?? []);
      throw invalidWorld(problem.path, problem.message);
    }
    const now = clock.now();
    const plan = planWorld(doc as WorldFile, now);
    try {
      const counts = await db.transaction().execute(async (trx) => {
        await reconcile(trx, plan);
        return write(trx, cipher, plan, now);
      });
      return {
        workspaces: plan.workspaces.map((w) => ({
          id: w.id,
          name: w.name,
          status: w.existing ? 'existing' : 'created',
          apiKeys: w.keys.map((k) => k.secret),
        })),
        counts,
      };
    } catch (err) {
      // Integrity violations (SQLSTATE class 23) mean the file contradicts saved data the checks above
      // do not model, such as one handle under two user ids; the transaction has already rolled back.
      const e = err as { code?: unknown; detail?: unknown; message?: string };
      if (!(err instanceof AppError) && typeof e.code === 'string' && e.code.startsWith('23')) {
        const detail = typeof e.detail === 'string' ? ` (${e.detail})` : '';
        throw conflict('world_conflict', `the database refused the world: ${e.message}${detail}`);
      }
      throw err;
    }
  }
  return { seed };
}

export type WorldService = ReturnType<typeof createWorldService>;
