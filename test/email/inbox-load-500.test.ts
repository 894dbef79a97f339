import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { dovecotAvailable, DOVECOT_MISSING } from '../helpers/dovecot.js';
import { startLoadMeter, useInboxWorld, WARM_UP_REPLY } from '../helpers/worlds/mailbox.js';
import { loadInboundCases, rewriteCase } from './inbound-fixtures.js';

// Issue 38 "Done when": a pass over 500 inbound messages keeps the event loop's p99 delay under 200 ms and RSS growth
// under 150 MB. The 500 are the real cases of test/fixtures/inbound (bounces of many mail systems, complaints, HTML
// and multilingual replies, auto-replies, leaver notices) cycled over 500 leads, each tied to a message we sent, read
// while /healthz is asked every 20 ms over real HTTP. The figures are printed (docs/email.md and the issue note quote
// them). Serial: one test, nothing else in this file.
if (!dovecotAvailable()) console.warn(`test/email/inbox-load-500.test.ts skipped: ${DOVECOT_MISSING}`);

const MESSAGES = 500;
const P99_CEILING_MS = 200;
const RSS_CEILING_MB = 150;
const CASES = loadInboundCases();

describe
  .skipIf(!dovecotAvailable() || CASES.length === 0)
  .sequential('an inbox pass over 500 real inbound messages (serial measurement)', { timeout: 600_000 }, () => {
    const w = useInboxWorld();
    let base: string;

    beforeAll(async () => {
      await w.t.app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(w.t.app.server.address() as AddressInfo).port}`;
    });

    it(`${MESSAGES} messages: p99 loop delay < ${P99_CEILING_MS} ms, RSS growth < ${RSS_CEILING_MB} MB, every one recorded`, async () => {
      // A warm-up pass over one ordinary reply (WARM_UP_REPLY says why its length), so what is measured is the 500,
      // not the process's first pass.
      const warm = await w.emailedLead();
      await w.deliver(
        ['From: ' + warm.email, 'To: dana@acme.example', 'Subject: Re: Quick question', `In-Reply-To: ${warm.messageId}`, '', WARM_UP_REPLY, ''].join('\r\n'),
      );
      await w.tick();

      const imap = await w.dovecot.client('dana');
      try {
        for (let n = 0; n < MESSAGES; n++) {
          const c = CASES[n % CASES.length];
          const lead = await w.emailedLead({ email: `load.${n}@initech.example` });
          await imap.append('INBOX', Buffer.from(rewriteCase(c, { ...lead, n: n + 1 }).raw, 'latin1'));
        }
      } finally {
        await imap.logout().catch(() => imap.close());
      }
      await new Promise((r) => setTimeout(r, 1000));

      const meter = startLoadMeter();
      let failures = 0;
      let requests = 0;
      let polling = true;
      const poller = (async () => {
        while (polling) {
          try {
            const res = await fetch(`${base}/healthz`);
            await res.text();
            requests += 1;
            if (res.status !== 200) failures += 1;
          } catch {
            failures += 1;
          }
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      const started = performance.now();
      // A mailbox's poll reads at most 200 messages; the rest is due at once, on the next pass.
      let passes = 0;
      const counts: Record<string, number> = {};
      for (; passes < 10; passes++) {
        const m = (await w.tick()).mailboxes?.[w.mailboxId] ?? {};
        let read = 0;
        for (const [k, v] of Object.entries(m))
          if (typeof v === 'number' && k !== 'sent') {
            counts[k] = (counts[k] ?? 0) + v;
            read += v;
          }
        if (read === 0) break;
      }
      const passMs = performance.now() - started;
      polling = false;
      await poller;
      const { loopDelayP50Ms, loopDelayP99Ms, loopDelayMaxMs, rssGrowthMb } = meter.stop();

      const figures = {
        messages: MESSAGES,
        passes,
        totalMs: Math.round(passMs),
        msPerMessage: Math.round((passMs / MESSAGES) * 10) / 10,
        loopDelayP50Ms,
        loopDelayP99Ms,
        loopDelayMaxMs,
        rssGrowthMb,
        healthzRequests: requests,
        healthzFailures: failures,
        counts,
      };
      console.log(`inbox 500-message pass: ${JSON.stringify(figures)}`);

      const recorded = await w.t.db
        .selectFrom('email_inbound_seen')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('mailbox_id', '=', w.mailboxId)
        .executeTakeFirstOrThrow();
      expect(Number(recorded.n)).toBe(MESSAGES + 1);
      expect(counts.unparseable ?? 0).toBe(0);
      expect(figures.loopDelayP99Ms).toBeLessThan(P99_CEILING_MS);
      expect(figures.rssGrowthMb).toBeLessThan(RSS_CEILING_MB);
      expect(failures).toBe(0);
      expect(requests).toBeGreaterThan(0);
    });
  });
