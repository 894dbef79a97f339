import { defineConfig } from 'vitest/config';

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
const projects = [{ test: { ...shared, name: 'pglite' } }];
if (process.env.TEST_DATABASE_URL) projects.push({ test: { ...shared, name: 'postgres' } });

export default defineConfig({
  test: {
    projects,
    maxWorkers: 2,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
