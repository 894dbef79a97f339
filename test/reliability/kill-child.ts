// A process for the kill tests: the parent SIGKILLs it at random moments. Configuration arrives through the
// environment. KILL_CHILD_MODE=webhooks runs the dispatcher and delivery loop (startWorker, as `outreach worker`
// does); KILL_CHILD_MODE=engine runs engine passes back to back against a provider the parent plays over HTTP
// (perform and confirm by idempotency key, as a real provider answers). It prints "ready" once running.
import { createServices } from '../../src/app/services.js';
import { loadConfig, type Env } from '../../src/config/config.js';
import { createDatabase } from '../../src/db/database.js';
import type { Channel, ChannelDriver, ChannelDrivers } from '../../src/channels/types.js';
import { systemClock } from '../../src/lib/clock.js';
import { createTextCipher } from '../../src/lib/crypto.js';
import { startWorker } from '../../src/worker.js';

const url = process.env.KILL_CHILD_DATABASE_URL!;
const env = JSON.parse(process.env.KILL_CHILD_ENV ?? '{}') as Partial<Env>;
const handle = await createDatabase({ kind: 'postgres', url, poolSize: 4 });
const config = loadConfig({}, { DATABASE_URL: url, OUTREACH_WEBHOOKS_ALLOW_INSECURE: '1', OUTREACH_SEED_DEMO: '0', LOG_LEVEL: 'silent', ...env });
const cipher = createTextCipher(Buffer.from(process.env.KILL_CHILD_CIPHER_KEY!, 'hex'));

if (process.env.KILL_CHILD_MODE === 'webhooks') {
  // The lease is generous: under a loaded CI machine a live worker can take seconds to report, and a lease that
  // expires under a live worker counts as a lost attempt (three of those fail the delivery, by design).
  startWorker({ db: handle.db, config, cipher, timeoutMs: 2000, leaseMs: 15_000, idlePollMs: 100, retentionMs: 0 });
} else {
  const provider = process.env.KILL_CHILD_PROVIDER_URL!;
  const call = async (path: string, body: object) => {
    const res = await fetch(`${provider}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return res.json();
  };
  const driver = (channel: Channel): ChannelDriver => ({
    channel,
    perform: async (action) =>
      call('/perform', { key: action.idempotencyKey, kind: action.kind, leadId: action.recipient.leadId, accountId: action.accountId, pid: process.pid }),
    confirm: async (action) => call('/confirm', { key: action.idempotencyKey }),
    observe: async () => [],
  });
  const drivers: ChannelDrivers = { forChannel: (channel) => driver(channel as Channel) };
  const services = createServices({ db: handle.db, config, clock: systemClock, cipher, drivers });
  void (async () => {
    for (;;) {
      try {
        const summary = await services.engine.runPass();
        if (summary.actions === 0) await new Promise((r) => setTimeout(r, 100));
      } catch (err) {
        process.stderr.write(`engine pass failed: ${(err as Error).message}\n`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  })();
}
process.stdout.write('ready\n');
