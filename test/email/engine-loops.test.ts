import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { dovecotAvailable } from '../helpers/dovecot.js';
import { insertSendingLead, SENDING_ENV, startMailboxWorld, type MailboxWorld } from '../helpers/worlds/mailbox.js';
import { startEngineLoops } from '../../src/engine/loop.js';

// The engine's two loops in a running process (docs/engine.md "Loops"), on the wall clock against a real Dovecot and
// an SMTP receiver: a mailbox is read every configured interval (not every second one), and a due send goes out while
// the inbox loop is held up by an IMAP server that never answers.

const silent = { error: () => undefined };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!dovecotAvailable())('the sending loop and the inbox loop', () => {
  let w: MailboxWorld | undefined;
  let loops: { stop(): Promise<void> } | undefined;
  afterEach(async () => {
    await loops?.stop();
    loops = undefined;
    await w?.close();
    w = undefined;
  });

  it('a pass a few milliseconds before a mailbox is due reads it when it looks half an interval ahead (a loop pass), not otherwise', async () => {
    w = await startMailboxWorld({ env: { ...SENDING_ENV, OUTREACH_INBOX_POLL_INTERVAL: 60 } });
    const engine = w.t.services.engine;
    const polled = (report: unknown) => Object.keys((report as { mailboxes?: object }).mailboxes ?? {}).length;
    const t0 = Date.now() + 1000;
    expect(polled(await engine.runWatchPass({ now: new Date(t0) }))).toBe(1);
    // The next pass starts one interval after the last began, 3 ms before the mailbox's next poll (t0 + 60 s).
    const early = new Date(t0 + 60_000 - 3);
    expect(polled(await engine.runWatchPass({ now: early }))).toBe(0);
    expect(polled(await engine.runWatchPass({ now: early, dueWithinSeconds: 30 }))).toBe(1);
    // Read then, its next poll is one interval after that pass: a pass less than half an interval later leaves it.
    expect(polled(await engine.runWatchPass({ now: new Date(early.getTime() + 29_000), dueWithinSeconds: 30 }))).toBe(0);
  }, 60_000);

  it('a mailbox set to 2 s is read every 2 s (±10 %), not every 4 s', async () => {
    w = await startMailboxWorld({ realClock: true, env: { ...SENDING_ENV, OUTREACH_INBOX_POLL_INTERVAL: 2, OUTREACH_INBOX_IDLE: '0' } });
    const world = w;
    // Each poll writes the mailbox's next poll one interval after it; a claim writes a 5-minute lease, left out here.
    const seen: number[] = [];
    const sample = async () => {
      const row = await world.t.db.selectFrom('mailboxes').select('next_poll_at').where('id', '=', world.mailboxId).executeTakeFirstOrThrow();
      const at = new Date(row.next_poll_at).getTime();
      if (at < Date.now() + 60_000 && seen.at(-1) !== at) seen.push(at);
    };
    loops = startEngineLoops(world.t.services.engine, 2, silent);
    const until = Date.now() + 13_000;
    while (Date.now() < until) {
      await sample();
      await sleep(50);
    }
    const gaps = seen.slice(1).map((at, i) => at - seen[i]);
    console.log(`engine loops: a mailbox set to 2 s read at gaps of ${gaps.join(', ')} ms`);
    expect(gaps.length, JSON.stringify(gaps)).toBeGreaterThanOrEqual(5);
    // The first gap may include start-up; every later one is the period.
    for (const gap of gaps.slice(1)) {
      expect(gap, JSON.stringify(gaps)).toBeGreaterThanOrEqual(1800);
      expect(gap, JSON.stringify(gaps)).toBeLessThanOrEqual(2200);
    }
  }, 60_000);

  it('a due send goes out at once while the inbox loop waits on an IMAP server that never answers', async () => {
    // Accepts connections and says nothing (no IMAP greeting): a poll of it waits for its own timeout.
    const held: net.Socket[] = [];
    const silentImap = net.createServer((socket) => void held.push(socket));
    await new Promise<void>((r) => silentImap.listen(0, '127.0.0.1', r));
    const port = (silentImap.address() as net.AddressInfo).port;
    try {
      w = await startMailboxWorld({
        realClock: true,
        env: { ...SENDING_ENV, OUTREACH_INBOX_POLL_INTERVAL: 60 },
        energy: 1_000,
        mailbox: { imapUrl: () => `imap://dana:pw@127.0.0.1:${port}` },
      });
      const world = w;
      loops = startEngineLoops(world.t.services.engine, 1, silent);
      // The inbox loop is on its first mailbox: the IMAP server took the connection and never answers. Only then is a
      // send made due (made due before, it could go out before the inbox loop had even connected, proving nothing,
      // and the test failed under load on that order).
      await expect.poll(() => held.length, { timeout: 10_000, interval: 20 }).toBeGreaterThanOrEqual(1);
      await insertSendingLead(world, 'bob@initech.example', new Date(Date.now() - 1000));
      const started = Date.now();
      await expect.poll(() => world.smtp.messages.length, { timeout: 10_000, interval: 50 }).toBe(1);
      const sentAfterMs = Date.now() - started;
      // Within the sending loop's 1 s interval and one pass, while the inbox loop still waits.
      expect(sentAfterMs).toBeLessThan(3000);
    } finally {
      for (const s of held) s.destroy();
      await new Promise<void>((r) => silentImap.close(() => r()));
    }
  }, 60_000);
});
