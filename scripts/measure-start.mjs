// Start-up measurement of the compiled server on the embedded database (docs/package.md records the figures):
//   npm run build && node scripts/measure-start.mjs [runs=1]
// Each run: a first start on an empty data dir (demo world loaded), then a restart. Prints the wall time until
// GET /healthz first answers, the process's CPU time (all threads) at that moment, and its resident memory.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const runs = Number(process.argv[2] ?? 1);
const port = 18000 + Math.floor(Math.random() * 1000);
const ticks = 100; // USER_HZ on Linux

function procStat(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return { cpuSeconds: (Number(stat[11]) + Number(stat[12])) / ticks, rssMb: Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024) };
}

async function start(dataDir) {
  const started = performance.now();
  const child = spawn(process.execPath, ['dist/main.js'], {
    env: { ...process.env, OUTREACH_DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', OUTREACH_ENGINE_INTERVAL: '0' },
    stdio: 'ignore',
  });
  let exited = false;
  child.on('exit', () => (exited = true));
  for (;;) {
    if (exited) throw new Error('the server exited during start-up');
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const readyMs = Math.round(performance.now() - started);
  const { cpuSeconds, rssMb } = procStat(child.pid);
  child.kill('SIGTERM');
  await new Promise((r) => (exited ? r() : child.on('exit', r)));
  return { readyMs, cpuSeconds, rssMb };
}

for (let i = 0; i < runs; i++) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-start-'));
  try {
    const first = await start(dir);
    const restart = await start(dir);
    const load = os.loadavg()[0].toFixed(1);
    console.log(JSON.stringify({ first, restart, loadAverage: Number(load) }));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
