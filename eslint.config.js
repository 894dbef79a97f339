// ESLint: typescript-eslint's type-checked recommended rules over the TypeScript project (docs/lint.md).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import house from './eslint-rules/index.js';

// The console's browser scripts run in the page, not in Node.
const browserGlobals = Object.fromEntries(
  [
    'window',
    'document',
    'HTMLElement',
    'HTMLInputElement',
    'HTMLFormElement',
    'Element',
    'Event',
    'KeyboardEvent',
    'FormData',
    'fetch',
    'URL',
    'console',
    'uPlot',
    'htmx',
    'setTimeout',
    'clearTimeout',
    'requestAnimationFrame',
    'getComputedStyle',
    'ResizeObserver',
    'CustomEvent',
    'location',
    'navigator',
  ].map((g) => [g, 'readonly']),
);
const nodeGlobals = Object.fromEntries(
  [
    'process',
    'console',
    'Buffer',
    'URL',
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'setImmediate',
    'fetch',
    'AbortController',
    'performance',
    'structuredClone',
    'TextEncoder',
    'TextDecoder',
    'require',
    'module',
    '__dirname',
  ].map((g) => [g, 'readonly']),
);

// A lead's lane columns: only src/domain/lanes.ts sets them (its LANE_COLUMNS; test/lint/boundaries.test.ts checks the
// two lists agree).
export const LANE_COLUMNS = [
  'sequence_id',
  'current_step',
  'variant_key',
  'stage',
  'next_action_at',
  'automation_stopped',
  'waiting_for',
  'snoozed_until',
  'step_attempts',
  'step_waits',
  'inflight_key',
  'inflight_step',
  'inflight_at',
  'inflight_release',
  'observe_next_at',
  'observe_until',
  'last_message_channel',
  'branch_at',
  'branch_allowed',
];

// Import-boundary helpers for the layer blocks below. `group` patterns are gitignore-style: `!` re-allows a path
// whose parent folder is not itself excluded.
const boundary = (message, ...group) => ({ group, message: `${message} (docs/architecture.md).` });
const restrictImports = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });
const forbidLayers = (who, ...layers) =>
  boundary(`${who} must not import from ${layers.map((l) => `src/${l}`).join(', ')}`, ...layers.map((l) => `**/${l}/**`));
const moduleInternals = boundary('Import a module only through its face, modules/<module>/index.js', '**/modules/*/*', '!**/modules/*/index.js');
const channelInternals = boundary('Import a channel only through its face, channels/<channel>/index.js', '**/channels/*/*', '!**/channels/*/index.js');
// From a file `depth` folders inside src/modules/<module>/, another module's files are `../`×depth + `<other>/<file>`:
// only `<other>/index.js` is allowed there, while `../`×(depth+1) leaves src/modules and is left to the other patterns.
const otherModuleInternals = (depth) => {
  const up = '../'.repeat(depth);
  return boundary("Across modules, import only the other module's face, ../<module>/index.js", `${up}*/*`, `!${up}*/index.js`, `!${up}../**`);
};

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      '.outreach/**',
      '.test-cache/**',
      '.cache/**',
      'packages/*/dist/**',
      'packages/client/src/openapi.ts',
      'docs/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // `_`-prefixed names are deliberately unused (a parameter kept for its position, a destructured-away field).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // `async` on a function with no `await` is deliberate here: it implements a Promise-returning interface
      // (drivers, providers, repositories), and a throw inside becomes a rejection instead of a synchronous throw.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Migrations take `Kysely<any>` on purpose (Kysely's own advice): a migration must not depend on today's
    // table types, which change after it was written.
    files: ['src/db/migrations/**', 'src/db/migrate.ts', 'src/db/sql-script.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  // Layer boundaries (docs/architecture.md). src/domain and src/lib are foundations that import no layer above them;
  // src/channels holds one folder per channel behind the driver interface (channels/types.ts), below every module;
  // src/engine is the sender and knows no module; src/modules/<module> is one resource each; app, console, mcp, cli
  // and webhooks compose them. Outside a module, only its face src/modules/<module>/index.ts may be imported (never a
  // repository); a channel folder likewise only through its index.ts. Tests, benches and scripts may reach internals.
  // Flat config keeps only the last matching block's options for a rule, so each block lists every pattern its files
  // obey, general blocks first.
  { files: ['src/**/*.{ts,tsx}'], rules: restrictImports(moduleInternals) },
  ...[1, 2, 3].map((depth) => ({
    files: [`src/modules/*/${'*/'.repeat(depth - 1)}*.{ts,tsx}`],
    rules: restrictImports(otherModuleInternals(depth), moduleInternals, forbidLayers('A module', 'engine'), channelInternals),
  })),
  { files: ['src/engine/**'], rules: restrictImports(forbidLayers('The engine', 'modules'), channelInternals) },
  { files: ['src/channels/**'], rules: restrictImports(forbidLayers('A channel', 'modules', 'engine', 'app', 'console', 'mcp', 'cli')) },
  {
    files: ['src/domain/**', 'src/lib/**'],
    rules: restrictImports(forbidLayers('The foundations (domain, lib)', 'modules', 'engine', 'channels', 'app', 'console', 'mcp', 'cli')),
  },
  {
    files: ['**/*.test.ts', '**/*.test.tsx', '**/*.test-support.ts', 'test/**', 'bench/**', 'scripts/**'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    // The test house (docs/architecture.md): only a pure-function test sits beside its code. One that needs a
    // database, the network or the test helpers lives under test/.
    files: ['src/**/*.test.ts', 'src/**/*.test.tsx'],
    rules: restrictImports(
      boundary(
        'A test beside its code tests pure functions; one that needs a database, the network or test/helpers lives under test/',
        '**/test/**',
        '**/db/**',
        'kysely',
        'pg',
        '@electric-sql/pglite',
        'undici',
        'node:http',
        'node:net',
        'fastify',
      ),
    ),
  },
  // The house rules (eslint-rules/index.js, docs/lint.md): no import circle in src/, type-only imports included; one
  // writer of the activity ledger and one of a lead's lanes; an engine that names no channel.
  {
    files: ['src/**/*.{ts,tsx}'],
    ignores: ['**/*.test.ts', '**/*.test.tsx', '**/*.test-support.ts', 'src/db/migrations/**'],
    plugins: { house },
    rules: {
      'house/no-import-cycle': 'error',
      'house/ledger-owner': 'error',
      'house/lanes-owner': ['error', { columns: LANE_COLUMNS }],
    },
  },
  {
    // Sizes (docs/lint.md "House rules"): no hand-written file over 450 lines, no function over 100 own lines. A
    // migration is one SQL script in one function, kept as it ran.
    files: ['src/**/*.{ts,tsx}'],
    ignores: ['**/*.test.ts', '**/*.test.tsx', 'src/db/migrations/**'],
    plugins: { house },
    rules: { 'max-lines': ['error', { max: 450 }], 'house/max-own-lines': ['error', { max: 100 }] },
  },
  { files: ['src/domain/ledger.ts'], rules: { 'house/ledger-owner': 'off' } },
  { files: ['src/domain/lanes.ts', 'src/domain/lanes/**'], rules: { 'house/lanes-owner': 'off' } },
  { files: ['src/engine/**'], ignores: ['**/*.test.ts'], plugins: { house }, rules: { 'house/engine-names-no-channel': 'error' } },
  {
    // Tests and benches read HTTP answers through `res.json()`, which is `any` by design; the expectations that
    // follow are the type check. The unsafe-any family would only add casts that check nothing.
    files: ['test/**', 'bench/**', '**/*.test.ts', 'scripts/**'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      // Test servers take `async (req, res) => …` handlers; a rejection there fails the test that awaits the answer.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
    },
  },
  { files: ['**/*.js', '**/*.mjs', '**/*.cjs'], ...tseslint.configs.disableTypeChecked },
  { files: ['src/console/assets/**/*.js'], languageOptions: { globals: browserGlobals, sourceType: 'script' } },
  { files: ['bin/**', 'scripts/**', 'eslint.config.js', '.ci/**'], languageOptions: { globals: nodeGlobals } },
);
