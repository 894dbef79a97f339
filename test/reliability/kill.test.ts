import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/index.js';
import { enqueueEvents } from '../../src/webhooks/outbox.js';
import { MAX_LOST_ATTEMPTS } from '../../src/webhooks/claims.js';
import { MAX_ATTEMPTS } from '../../src/webhooks/deliver.js';
import { createTextCipher } from '../../src/lib/crypto.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertSequence } from '../helpers/factories.js';
import { dbEngine } from '../helpers/test-database.js';
import { ENGINE_ENV, insertAccount, step, steps } from '../engine/helpers.js';

// SIGKILL at a small size, kept in CI: standalone webhook workers killed mid-delivery, and engine processes
// killed mid-pass. Nothing is lost, no step is sent twice, the daily caps hold. Killing a process needs a
// database other processes can share, so this runs on PostgreSQL only.
const KILLS = Number(process.env.RELIABILITY_KILLS ?? 4);
const cipherKey = randomBytes(32);

async function listen(server: Server) {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return (server.address() as AddressInfo).port;
}

function readBody(req: import('node:http').IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, predicate: () => Promise<boolean> | boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe.skipIf(dbEngine() === 'pglite')('SIGKILL of worker processes (PostgreSQL only: PGlite is one process, nothing to share a database with)', () => {
  let t: TestApp;
  const children = new Set<ChildProcess>();
  beforeAll(async () => {
    t = await buildTestApp({ cipher: createTextCipher(cipherKey), env: { OUTREACH_WEBHOOKS_ALLOW_INSECURE: '1' } });
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await t?.close();
  });

  function spawnChild(mode: 'webhooks' | 'engine', extra: Record<string, string> = {}) {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/reliability/kill-child.ts'], {
      env: {
        ...process.env,
        KILL_CHILD_MODE: mode,
        KILL_CHILD_DATABASE_URL: (t.handle as { url?: string }).url!,
        KILL_CHILD_CIPHER_KEY: cipherKey.toString('hex'),
        ...extra,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.add(child);
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (c: Buffer) => c.toString().includes('ready') && resolve());
      child.once('exit', () => reject(new Error('child exited before it was ready')));
    });
    // A replacement may be killed before it is ready; only a caller that awaits `ready` cares.
    ready.catch(() => undefined);
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    return { child, ready, exited };
  }

  async function kill(c: { child: ChildProcess; exited: Promise<void> }) {
    c.child.kill('SIGKILL');
    await c.exited;
    children.delete(c.child);
  }

  it(`webhook workers SIGKILLed ${KILLS} times mid-delivery: every event delivered, signatures valid, duplicates only from kills`, async () => {
    const EVENTS = 400;
    const { workspaceId } = await createWorkspaceWithKey(t, 'Kill webhooks');
    const received: { delivery: string; at: number; ok: boolean; signed: boolean; status: number }[] = [];
    let secret = '';
    const firstSeen = new Set<string>();
    const receiver = createServer(async (req, res) => {
      const raw = await readBody(req);
      const delivery = String(req.headers['x-service-delivery']);
      const signed = verifyWebhook(raw, String(req.headers['x-service-signature']), secret).ok === true;
      // Slow enough that kills land mid-delivery; one in ten deliveries fails its first attempt (retried).
      await sleep(300 + Math.floor(Math.random() * 500));
      const fail = !firstSeen.has(delivery) && parseInt(delivery.slice(-2), 16) % 10 === 0;
      firstSeen.add(delivery);
      const status = fail ? 503 : 200;
      received.push({ delivery, at: Date.now(), ok: status === 200, signed, status });
      res.writeHead(status).end();
    });
    const port = await listen(receiver);
    try {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: await t.services.workspaces.createApiKey({ workspaceId }).then((k) => ({ authorization: `Bearer ${k.key}` })),
        payload: { url: `http://127.0.0.1:${port}/hook`, events: ['lead.invited'] },
      });
      expect(res.statusCode, res.body).toBe(201);
      secret = res.json().secret;
      await t.db.transaction().execute((trx) =>
        enqueueEvents(
          trx,
          Array.from({ length: EVENTS }, (_, i) => ({ workspaceId, event: 'lead.invited' as const, data: { lead: { id: `lead-${i}` } } })),
        ),
      );
      let workers = [spawnChild('webhooks'), spawnChild('webhooks')];
      await Promise.all(workers.map((w) => w.ready));
      let kills = 0;
      // Each kill lands while that worker has attempts in flight (up to its 8 slots); its replacement starts
      // at once, without waiting, so the kills keep pace with the deliveries.
      while (kills < KILLS) {
        const seen = received.length;
        await until(`deliveries to flow (${seen} so far, ${kills} kills)`, () => received.length >= seen + 10, 60_000);
        const victim = workers[kills % 2];
        await kill(victim);
        kills++;
        const fresh = spawnChild('webhooks');
        workers = workers.map((w) => (w === victim ? fresh : w));
      }
      const inFlightAtKills = kills * 8;
      // Wait until every delivery has ended (delivered or failed), so a failure shows up below as the failed rows
      // and their last errors rather than as a timeout.
      await until(
        'every delivery to end',
        async () => {
          const { rows } = await sql<{
            n: number;
          }>`SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhooks h ON h.id = d.webhook_id WHERE h.workspace_id = ${workspaceId}::uuid AND d.state IN ('delivered', 'failed')`.execute(
            t.db,
          );
          return Number(rows[0].n) === EVENTS;
        },
        180_000,
      );
      for (const w of workers) await kill(w);
      const delivered = new Set(received.filter((r) => r.ok).map((r) => r.delivery));
      expect(received.filter((r) => !r.signed)).toEqual([]);
      const states = await t.db
        .selectFrom('webhook_deliveries')
        .innerJoin('webhooks', 'webhooks.id', 'webhook_deliveries.webhook_id')
        .select([
          'webhook_deliveries.id',
          'webhook_deliveries.state',
          'webhook_deliveries.attempts',
          'webhook_deliveries.lost_attempts',
          'webhook_deliveries.last_error',
        ])
        .where('webhooks.workspace_id', '=', workspaceId)
        .execute();
      // Every delivery delivered within its retry budget (MAX_ATTEMPTS reported attempts); the claims a kill cut short
      // are counted apart (lost_attempts, at most MAX_LOST_ATTEMPTS): two kills can land on one slow delivery.
      expect(states.filter((s) => s.state !== 'delivered' || s.attempts - s.lost_attempts > MAX_ATTEMPTS || s.lost_attempts > MAX_LOST_ATTEMPTS)).toEqual([]);
      expect(delivered.size).toBe(EVENTS);
      // At-least-once: a delivery is received twice only when a kill cut its attempt short.
      const successes = received.filter((r) => r.ok).length;
      console.info(`webhook kills: ${kills} kills, ${EVENTS} events, ${received.length} requests, ${successes - EVENTS} duplicate successes`);
      expect(successes - EVENTS).toBeLessThanOrEqual(inFlightAtKills);
    } finally {
      receiver.closeAllConnections();
      receiver.close();
    }
  }, 330_000);

  it(`engine processes SIGKILLed ${KILLS} times mid-pass: no step sent twice, nothing lost, daily caps hold`, async () => {
    const CAP = 100;
    const LEADS_PER_ACCOUNT = 120;
    const { workspaceId: ws } = await createWorkspaceWithKey(t, 'Kill engine');
    await t.db.updateTable('workspaces').set({ energy_balance: 1_000_000 }).where('id', '=', ws).execute();
    const accounts = [await insertAccount(t.db, ws), await insertAccount(t.db, ws), await insertAccount(t.db, ws)];
    const seq = await insertSequence(t.db, ws, {
      steps: steps(step('connect', { message: 'Hi {{firstName}}' }), step('engage', { actions: [{ type: 'like', count: 1, reaction: null }] })),
    });
    await sql`INSERT INTO leads (id, workspace_id, person, linkedin_url, account_id, sequence_id, next_action_at)
      SELECT gen_random_uuid(), ${ws}::uuid, 'Kill ' || g, 'https://li.example/kill-' || g, (ARRAY[${accounts[0]}, ${accounts[1]}, ${accounts[2]}])[1 + g % 3], ${seq}::uuid, now() - make_interval(secs => g)
      FROM generate_series(0, ${3 * LEADS_PER_ACCOUNT - 1}) g`.execute(t.db);

    // The provider: it remembers every key it accepted (a repeat is answered with the first id, as providers do,
    // and counted: that is a step sent twice) and answers confirm() by key.
    const accepted = new Map<string, { kind: string; leadId: string; accountId: string }>();
    const repeats: string[] = [];
    const performers: number[] = [];
    const log: string[] = [];
    const provider = createServer(async (req, res) => {
      const body = JSON.parse((await readBody(req)).toString());
      if (req.url === '/confirm')
        return void res.end(JSON.stringify(accepted.has(body.key) ? { status: 'sent', externalId: body.key } : { status: 'not_sent' }));
      await sleep(150 + Math.floor(Math.random() * 100));
      log.push(`${Date.now()} ${body.pid} ${body.key}${accepted.has(body.key) ? ' REPEAT' : ''}`);
      if (accepted.has(body.key)) repeats.push(body.key);
      else accepted.set(body.key, { kind: body.kind, leadId: body.leadId, accountId: body.accountId });
      performers.push(body.pid);
      res.end(JSON.stringify({ outcome: 'ok', externalId: body.key }));
    });
    const port = await listen(provider);
    const env = JSON.stringify({
      ...ENGINE_ENV,
      OUTREACH_PACING_RAMP: '',
      OUTREACH_PACING_INVITE_CAP: CAP,
      OUTREACH_PACING_MESSAGE_CAP: 1000,
      // The lease must outlast a batch's sends (batch × latency / concurrency): the lease starts at the claim, so
      // a shorter one lets a live process's later leads be recovered and re-sent under the same key (reported).
      OUTREACH_ENGINE_INFLIGHT_LEASE: 10,
      OUTREACH_ENGINE_BATCH_SIZE: 6,
      OUTREACH_ENGINE_CONCURRENCY: 2,
    });
    const start = () => spawnChild('engine', { KILL_CHILD_PROVIDER_URL: `http://127.0.0.1:${port}`, KILL_CHILD_ENV: env });
    try {
      let engines = [start(), start()];
      await Promise.all(engines.map((e) => e.ready));
      let kills = 0;
      while (kills < KILLS) {
        const seen = performers.length;
        await until(`sends to flow (${seen} so far, ${kills} kills)`, () => performers.length >= seen + 5, 60_000);
        // The process that sent last is inside a pass right now; its replacement starts without waiting.
        const busy = performers[performers.length - 1];
        const victim = engines.find((e) => e.child.pid === busy) ?? engines[0];
        await kill(victim);
        log.push(`${Date.now()} KILL ${victim.child.pid}`);
        kills++;
        const fresh = start();
        engines = engines.map((e) => (e === victim ? fresh : e));
      }
      const expected = 3 * CAP * 2; // every account's capped invites, then each invited lead's like
      await until(
        'the capped work to finish and every in-flight mark to clear',
        async () => {
          const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM leads WHERE workspace_id = ${ws}::uuid AND inflight_key IS NOT NULL`.execute(
            t.db,
          );
          return accepted.size >= expected && Number(rows[0].n) === 0;
        },
        120_000,
      );
      await sleep(1500);
      for (const e of engines) await kill(e);

      if (repeats.length) {
        const lead = repeats[0].split(':')[0];
        const { rows } = await sql`SELECT action, outcome, detail, created_at FROM activity WHERE lead_id = ${lead}::uuid ORDER BY created_at`.execute(t.db);
        console.info(
          `${repeats.length} repeats; first ${repeats[0]}\n${log.filter((l) => l.includes(lead) || l.includes('KILL')).join('\n')}\n${JSON.stringify(rows, null, 1)}`,
        );
      }
      expect(repeats).toEqual([]);
      expect(accepted.size).toBe(expected);
      const invitesByAccount = new Map<string, number>();
      for (const a of accepted.values()) if (a.kind === 'connect') invitesByAccount.set(a.accountId, (invitesByAccount.get(a.accountId) ?? 0) + 1);
      expect([...invitesByAccount.values()]).toEqual([CAP, CAP, CAP]);
      const { rows: counters } = await sql<{ invites: number }>`SELECT used AS invites FROM send_budgets
        WHERE workspace_id = ${ws}::uuid AND scope = 'account' AND budget = 'invites'`.execute(t.db);
      for (const c of counters) expect(Number(c.invites)).toBeLessThanOrEqual(CAP);
      // Nothing lost: every send the provider took is in the ledger exactly once as a success, and nothing else is.
      const { rows: ledger } = await sql<{ lead_id: string; action: string; n: number }>`
        SELECT lead_id, action, count(*)::int AS n FROM activity WHERE workspace_id = ${ws}::uuid AND outcome = 'ok' GROUP BY 1, 2`.execute(t.db);
      expect(ledger.filter((r) => Number(r.n) !== 1)).toEqual([]);
      const okKeys = new Set(ledger.map((r) => `${r.lead_id}:${r.action === 'invite' ? 'connect' : 'engage'}`));
      const providerKeys = new Set([...accepted.values()].map((a) => `${a.leadId}:${a.kind}`));
      expect(okKeys).toEqual(providerKeys);
      console.info(`engine kills: ${kills} kills, ${accepted.size} sends, ${repeats.length} repeated, caps ${[...invitesByAccount.values()].join('/')}`);
    } finally {
      provider.closeAllConnections();
      provider.close();
    }
  }, 300_000);
});
