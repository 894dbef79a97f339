// ESLint: typescript-eslint's type-checked recommended rules over the TypeScript project (docs/lint.md).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.outreach/**', '.test-cache/**', 'src/client/openapi.ts', 'docs/**'] },
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
