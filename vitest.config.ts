import { configDefaults, defineConfig } from 'vitest/config';

// The suite runs on embedded PGlite always, and again on PostgreSQL when TEST_DATABASE_URL is set.
const shared = {
  include: ['src/**/*.test.ts', 'src/**/*.test.tsx', 'test/**/*.test.ts', 'test/**/*.test.tsx'],
  globalSetup: ['test/helpers/global-setup.ts'],
  testTimeout: 60_000,
  hookTimeout: 120_000,
  // Commands the tests spawn through bin/outreach.js run the TypeScript under test, not dist/.
  env: { OUTREACH_FROM_SOURCE: '1' },
  // The client package's sources, not its build (tsconfig.json `paths` does the same for tsc and tsx).
  alias: { '@workspace-outreach/client': new URL('./packages/client/src/index.ts', import.meta.url).pathname },
};
// Files whose database plays no part of what they prove run once per run, in the PGlite project: a browser in front of
// the console (its pages' HTTP and services are tested on both databases), a CLI process in front of the API, the
// 500-message pass's event-loop and memory bounds. README.md "Tests" lists them.
const PGLITE_ONLY = [
  'test/**/*.browser.test.ts',
  'test/cli/listen.test.ts',
  'test/cli/tail.test.ts',
  'test/cli/import.test.ts',
  'test/cli/leads-import*.test.ts',
  'test/email/inbox-load-500.test.ts',
];
const projects: { test: typeof shared & { name: string; exclude?: string[] } }[] = [{ test: { ...shared, name: 'pglite' } }];
if (process.env.TEST_DATABASE_URL) projects.push({ test: { ...shared, name: 'postgres', exclude: [...configDefaults.exclude, ...PGLITE_ONLY] } });

export default defineConfig({
  test: {
    projects,
    maxWorkers: 2,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
