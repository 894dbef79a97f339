import fs from 'node:fs';
import path from 'node:path';

export interface ControlInfo {
  pid: number;
  url: string;
  token: string;
}

// PGlite cannot be opened by two processes, so a server on the embedded database leaves its address and a
// per-run secret here (owner-only file) for the operator CLI to send admin commands through it instead.
const fileOf = (dataDir: string) => path.join(dataDir, 'server.json');

export const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

export function writeControlFile(dataDir: string, info: ControlInfo): void {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(fileOf(dataDir), JSON.stringify(info), { mode: 0o600 });
}

export function readControlFile(dataDir: string): ControlInfo | null {
  try {
    const info = JSON.parse(fs.readFileSync(fileOf(dataDir), 'utf8')) as ControlInfo;
    if (typeof info.pid === 'number' && info.pid !== process.pid && isAlive(info.pid)) return info;
    return null;
  } catch {
    return null;
  }
}

export function removeControlFile(dataDir: string): void {
  fs.rmSync(fileOf(dataDir), { force: true });
}
