import fs from 'node:fs';
import path from 'node:path';
import { isAlive } from './lib/control-file.js';

// The delivery loop lives with the rest of the webhook pipeline; this module keeps the process-level parts.
export { realSleep, startWorker, type RunningWorker, type Sleep, type StartWorkerOptions } from './webhooks/worker.js';

// PGlite is single-process: a standalone worker on the embedded database marks it as in use, the
// way a server does with its control file, so neither starts on top of the other.
const lockFileOf = (dataDir: string) => path.join(dataDir, 'worker.json');

export function readWorkerLock(dataDir: string): { pid: number } | null {
  try {
    const info = JSON.parse(fs.readFileSync(lockFileOf(dataDir), 'utf8')) as { pid: number };
    return typeof info.pid === 'number' && info.pid !== process.pid && isAlive(info.pid) ? info : null;
  } catch {
    return null;
  }
}

export function writeWorkerLock(dataDir: string): void {
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(lockFileOf(dataDir), JSON.stringify({ pid: process.pid }), { mode: 0o600 });
}

export function removeWorkerLock(dataDir: string): void {
  fs.rmSync(lockFileOf(dataDir), { force: true });
}
