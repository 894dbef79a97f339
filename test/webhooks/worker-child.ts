// A standalone worker process for the "killed mid-delivery" test: the parent SIGKILLs it while its
// attempt is in flight. Configuration arrives through the environment; it prints "ready" once running.
import { loadConfig } from '../../src/config/config.js';
import { createDatabase } from '../../src/db/database.js';
import { createTextCipher } from '../../src/lib/crypto.js';
import { startWorker } from '../../src/worker.js';

const url = process.env.CHILD_DATABASE_URL!;
const handle = await createDatabase({ kind: 'postgres', url, poolSize: 2 });
const config = loadConfig({}, { DATABASE_URL: url, OUTREACH_WEBHOOKS_ALLOW_INSECURE: '1', OUTREACH_SEED_DEMO: '0', LOG_LEVEL: 'silent' });
startWorker({
  db: handle.db,
  config,
  cipher: createTextCipher(Buffer.from(process.env.CHILD_CIPHER_KEY!, 'hex')),
  // Long enough that the parent kills it while the attempt is still waiting on the receiver.
  timeoutMs: 5000,
  leaseMs: 11_000,
  idlePollMs: 100,
  onAttempt: () => process.stdout.write('attempt\n'),
});
process.stdout.write('ready\n');
