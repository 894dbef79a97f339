// Second half of `npm run build`: after tsc, save an empty migrated embedded database beside the compiled code
// (see src/db/initial-snapshot.ts). OUTREACH_SKIP_SNAPSHOT=1 skips it; a first start then runs initdb instead.
if (process.env.OUTREACH_SKIP_SNAPSHOT === '1') process.exit(0);
const { writeInitialSnapshot } = await import('../dist/db/initial-snapshot.js');
const started = Date.now();
const file = await writeInitialSnapshot();
process.stderr.write(`embedded database snapshot: ${file} (${Date.now() - started} ms)\n`);
