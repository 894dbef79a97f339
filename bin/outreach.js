#!/usr/bin/env node
// The CLI runs the compiled JavaScript in dist/ (built by `npm run build`, which `npm install` runs as `prepare`).
// OUTREACH_FROM_SOURCE=1 runs the TypeScript sources through tsx instead: the test suite sets it so that
// the commands it spawns are the code under test, never a stale build.
import fs from 'node:fs';
import module from 'node:module';

const compiled = new URL('../dist/cli/main.js', import.meta.url);

if (process.env.OUTREACH_FROM_SOURCE === '1') {
  const { register } = await import('tsx/esm/api');
  // The repository's tsconfig (whatever the working directory): its `paths` map the client package to its sources.
  register({ tsconfig: new URL('../tsconfig.json', import.meta.url).pathname });
  await import('../src/cli/main.ts');
} else if (fs.existsSync(compiled)) {
  // Node 22.1+ keeps V8's compiled code on disk for the next start (docs/package.md); absent on Node 20.
  module.enableCompileCache?.();
  await import(compiled.href);
} else {
  process.stderr.write('outreach: dist/ is missing; run `npm run build` (npm install runs it) or set OUTREACH_FROM_SOURCE=1 with tsx installed\n');
  process.exit(1);
}
