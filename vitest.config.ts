import { readdirSync, statSync } from 'node:fs';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Whether the commands the tests spawn through bin/outreach.js run the TypeScript sources through tsx ('1') or dist/
 * ('0'): dist/ only when it was built after the newest change to what it is built from (src/, the client package's
 * sources, package.json and the tsconfigs), so a spawned command is always the code under test. CI builds dist/ in
 * `npm ci` (prepare) right before the tests, and a command from dist/ starts 2 to 6 s sooner than through tsx
 * (README "Tests"). An OUTREACH_FROM_SOURCE already set wins.
 */
function fromSource(): '0' | '1' {
  if (process.env.OUTREACH_FROM_SOURCE === '0' || process.env.OUTREACH_FROM_SOURCE === '1') return process.env.OUTREACH_FROM_SOURCE;
  const built = statSync(new URL('./dist/cli/main.js', import.meta.url), { throwIfNoEntry: false })?.mtimeMs;
  if (!built) return '1';
  const newest = (dir: URL): number =>
    readdirSync(dir, { withFileTypes: true }).reduce((n, e) => {
      const at = new URL(e.isDirectory() ? `${e.name}/` : e.name, dir);
      return Math.max(n, e.isDirectory() ? newest(at) : statSync(at).mtimeMs);
    }, 0);
  const sources = [new URL('./src/', import.meta.url), new URL('./packages/client/src/', import.meta.url)].map(newest);
  const files = ['package.json', 'tsconfig.json', 'tsconfig.build.json'].map((f) => statSync(new URL(`./${f}`, import.meta.url)).mtimeMs);
  return Math.max(...sources, ...files) < built ? '0' : '1';
}

// The suite runs on embedded PGlite always, and again on PostgreSQL when TEST_DATABASE_URL is set.
const shared = {
  include: ['src/**/*.test.ts', 'src/**/*.test.tsx', 'test/**/*.test.ts', 'test/**/*.test.tsx'],
  globalSetup: ['test/helpers/global-setup.ts'],
  testTimeout: 60_000,
  // A worker runs file after file in one module graph (docs/architecture.md "The test house"): each file still
  // opens its own database and app, but the src graph is imported once per worker, not once per file. On the whole
  // suite: import 1,193 s → 60 s summed over files, wall 2,798 s → 1,967 s. What a file changes in the process
  // (env, globals, module state) it restores; a test reads counters as deltas of copies. (A project's own option:
  // set at the root, beside maxWorkers, it is not passed on to the projects.)
  isolate: false,
  hookTimeout: 120_000,
  // Commands the tests spawn through bin/outreach.js run the code under test: dist/ when it is fresh, else tsx.
  env: { OUTREACH_FROM_SOURCE: fromSource() },
  // The client package's sources, not its build (tsconfig.json `paths` does the same for tsc and tsx).
  alias: { '@workspace-outreach/client': new URL('./packages/client/src/index.ts', import.meta.url).pathname },
};
// Files whose database plays no part of what they prove run once per run, in the PGlite project: a browser in front of
// the console, the console's pages over HTTP (they only call services, whose SQL the API and service tests run on both
// databases; the console's own tables, sessions and login links, stay on both), a CLI process in front of the API, the
// API's input fuzzing and HTTP contract (they prove what stands in front of the services, whose SQL runs on both
// elsewhere), a server's shutdown on a signal, and the 500-message pass's event-loop and memory bounds. README.md "Tests" lists them.
const CONSOLE_ON_BOTH = new Set(['sign-in.test.ts', 'session-security.test.ts', 'login-link.test.ts']);
const PGLITE_ONLY = [
  'test/**/*.browser.test.ts',
  ...readdirSync(new URL('./test/console/', import.meta.url))
    .filter((f) => f.endsWith('.test.ts') && !f.endsWith('.browser.test.ts') && !CONSOLE_ON_BOTH.has(f))
    .map((f) => `test/console/${f}`),
  'test/cli/listen.test.ts',
  'test/cli/tail.test.ts',
  'test/cli/import.test.ts',
  'test/cli/leads-import*.test.ts',
  'test/cli/serve-shutdown.test.ts',
  'test/reliability/openapi-fuzz.test.ts',
  // The HTTP contract in front of the services: the OpenAPI document, its examples and docs page, validation messages,
  // control characters, HTTP edges, rate limits (memory or Redis), the MCP tools' schemas, the CLI's descriptions.
  'test/api/openapi*.test.ts',
  'test/api/docs-security.test.ts',
  'test/api/validation-messages.test.ts',
  'test/api/control-characters.test.ts',
  'test/api/fuzz.test.ts',
  'test/api/http-edge.test.ts',
  'test/api/rate-limit-*.test.ts',
  'test/mcp/schemas.test.ts',
  'test/mcp/compact-schema.test.ts',
  'test/cli/descriptions.test.ts',
  'test/x/x-api-fake.test.ts',
  'test/server/public-url.test.ts',
  'test/email/inbox-load-500.test.ts',
  // Files that open no database at all run once: pure tests that read, parse or fake without one.
  'test/providers/publicdata/sandbox.test.ts',
  'src/providers/publicdata/cache.test.ts',
  'src/webhooks/sign.test.ts',
  'src/domain/policy.test.ts',
  'test/providers/publicdata/http.test.ts',
  'test/providers/publicdata/x-profile.test.ts',
  'test/x/x-provider.test.ts',
  'test/engine/smtp.test.ts',
  'test/email/inbox-parse.test.ts',
  'test/email/reports.test.ts',
  'test/email/smtp-pool.test.ts',
  'test/email/reply-text.test.ts',
  'test/webhooks/safe-url.test.ts',
  'test/webhooks/deliver.test.ts',
  'test/docs/env-documented.test.ts',
  'test/domain/names.test.ts',
  'test/domain/classify.test.ts',
  'test/domain/classify-set.test.ts',
  'test/domain/classify-cases.test.ts',
  'test/domain/budgets-grid.test.ts',
  'test/domain/public-address.test.ts',
];
const projects: { test: typeof shared & { name: string; exclude?: string[] } }[] = [{ test: { ...shared, name: 'pglite' } }];
if (process.env.TEST_DATABASE_URL) projects.push({ test: { ...shared, name: 'postgres', exclude: [...configDefaults.exclude, ...PGLITE_ONLY] } });

export default defineConfig({
  test: {
    projects,
    maxWorkers: 2,
    // Transformed modules kept on disk (node_modules/.experimental-vitest-cache) between runs: a rerun imports ~25% faster.
    experimental: { fsModuleCache: true },
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
