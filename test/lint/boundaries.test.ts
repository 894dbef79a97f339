import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { beforeAll, describe, expect, it } from 'vitest';
import { dbEngine } from '../helpers/test-database.js';

// The layer boundaries of eslint.config.js (docs/architecture.md), checked against planted imports. Each text is linted
// at a virtual path that does not exist, so nothing is written into src/. Such a path is outside the TypeScript
// project, so type-aware linting is switched off: only the import rules matter here.
describe.skipIf(dbEngine() === 'postgres')('import boundaries (run once, in the PGlite project)', () => {
  const root = join(import.meta.dirname, '..', '..');
  let eslint: ESLint;

  beforeAll(() => {
    eslint = new ESLint({ cwd: root, overrideConfig: tseslint.configs.disableTypeChecked });
  });

  /** The no-restricted-imports messages for `code` linted as if it were the file at `file` (relative to the repository). */
  async function boundaryErrors(file: string, code: string) {
    const [result] = await eslint.lintText(code, { filePath: join(root, file) });
    expect(result.messages.filter((m) => m.fatal)).toEqual([]);
    return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
  }

  const use = (specifier: string) => `import * as probe from '${specifier}';\nexport const used = probe;\n`;

  it('the engine may not import a module, not even its face', async () => {
    expect(await boundaryErrors('src/engine/zz-boundary-probe.ts', use('../modules/plays/plays.repository.js'))).toEqual([
      expect.stringContaining('The engine must not import from src/modules'),
    ]);
    expect(await boundaryErrors('src/engine/zz-boundary-probe.ts', use('../modules/plays/index.js'))).toHaveLength(1);
  });

  it("the engine reaches a channel through its face only, never the channel's files", async () => {
    expect(await boundaryErrors('src/engine/zz-boundary-probe.ts', use('../channels/email/send/driver.js'))).toEqual([
      expect.stringContaining('channels/<channel>/index.js'),
    ]);
    expect(await boundaryErrors('src/engine/zz-boundary-probe.ts', use('../channels/email/index.js'))).toEqual([]);
    expect(await boundaryErrors('src/engine/zz-boundary-probe.ts', use('../channels/types.js'))).toEqual([]);
  });

  it("a module may not import another module's repository or other files", async () => {
    for (const file of ['sequences.repository.js', 'sequences.service.js', 'sequences.schemas.js']) {
      expect(await boundaryErrors('src/modules/plays/zz-boundary-probe.ts', use(`../sequences/${file}`))).toEqual([
        expect.stringContaining("import only the other module's face"),
      ]);
    }
    // One folder deeper inside a module, the other module is one more `../` away.
    expect(await boundaryErrors('src/modules/world/planners/zz-boundary-probe.ts', use('../../workspaces/workspaces.repository.js'))).toHaveLength(1);
  });

  it("a module imports another module's face, its own files and the foundations freely", async () => {
    expect(await boundaryErrors('src/modules/plays/zz-boundary-probe.ts', use('../sequences/index.js'))).toEqual([]);
    expect(await boundaryErrors('src/modules/plays/zz-boundary-probe.ts', use('./plays.repository.js'))).toEqual([]);
    expect(await boundaryErrors('src/modules/plays/zz-boundary-probe.ts', use('../../lib/ids.js'))).toEqual([]);
    expect(await boundaryErrors('src/modules/world/planners/zz-boundary-probe.ts', use('../../workspaces/index.js'))).toEqual([]);
    expect(await boundaryErrors('src/modules/world/planners/zz-boundary-probe.ts', use('../world.schemas.js'))).toEqual([]);
  });

  it('a module may not import the engine', async () => {
    expect(await boundaryErrors('src/modules/plays/zz-boundary-probe.ts', use('../../engine/index.js'))).toEqual([
      expect.stringContaining('A module must not import from src/engine'),
    ]);
  });

  it('outside the modules, only a face is importable', async () => {
    expect(await boundaryErrors('src/app/zz-boundary-probe.ts', use('../modules/plays/plays.repository.js'))).toHaveLength(1);
    expect(await boundaryErrors('src/mcp/tools/zz-boundary-probe.ts', use('../../modules/plays/plays.routes.js'))).toHaveLength(1);
    expect(await boundaryErrors('src/app/zz-boundary-probe.ts', use('../modules/plays/index.js'))).toEqual([]);
  });

  it('channels and the foundations import no layer above them', async () => {
    expect(await boundaryErrors('src/channels/email/zz-boundary-probe.ts', use('../../modules/unsubscribe/index.js'))).toHaveLength(1);
    expect(await boundaryErrors('src/channels/email/zz-boundary-probe.ts', use('../../engine/index.js'))).toHaveLength(1);
    expect(await boundaryErrors('src/domain/zz-boundary-probe.ts', use('../channels/types.js'))).toHaveLength(1);
    expect(await boundaryErrors('src/lib/zz-boundary-probe.ts', use('../app/types.js'))).toHaveLength(1);
  });

  it('tests may reach internals', async () => {
    expect(await boundaryErrors('src/modules/plays/zz-boundary-probe.test.ts', use('../sequences/sequences.repository.js'))).toEqual([]);
    expect(await boundaryErrors('test/zz-boundary-probe.test.ts', use('../src/modules/plays/plays.repository.js'))).toEqual([]);
  });

  it('a test beside its code is pure: no database, network or test helper', async () => {
    for (const specifier of ['../../test/helpers/test-database.js', '../db/database.js', 'kysely', '@electric-sql/pglite', 'node:http']) {
      expect(await boundaryErrors('src/domain/zz-boundary-probe.test.ts', use(specifier)), specifier).toEqual([expect.stringContaining('lives under test/')]);
    }
    expect(await boundaryErrors('src/domain/zz-boundary-probe.test.ts', use('./policy.js'))).toEqual([]);
    expect(await boundaryErrors('test/domain/zz-boundary-probe.test.ts', use('../helpers/test-database.js'))).toEqual([]);
  });

  /** The messages of the house rule `rule` (eslint-rules/index.js) for `code` linted as if it were the file at `file`. */
  async function houseErrors(rule: string, file: string, code: string) {
    const [result] = await eslint.lintText(code, { filePath: join(root, file) });
    expect(result.messages.filter((m) => m.fatal)).toEqual([]);
    return result.messages.filter((m) => m.ruleId === `house/${rule}`).map((m) => m.message);
  }

  it('sizes: no function over 100 own lines (nested functions aside), no file over 450 lines', async () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const fn = (name: string, n: number, inner = '') => `export function ${name}() {\n${body(n)}\n${inner}\n  return 0;\n}\n`;
    expect(await houseErrors('max-own-lines', 'src/domain/zz-size-probe.ts', fn('long', 97))).toEqual([expect.stringContaining("'long' has 101 own lines")]);
    expect(await houseErrors('max-own-lines', 'src/domain/zz-size-probe.ts', fn('short', 96))).toEqual([]);
    // A factory of closures is judged by its own lines: 60 of its own and a 60-line closure inside are both in bounds.
    const factory = fn('factory', 60, `  const inner = () => {\n${body(60)}\n    return 1;\n  };\n  inner();`);
    expect(await houseErrors('max-own-lines', 'src/domain/zz-size-probe.ts', factory)).toEqual([]);
    const [long] = await eslint.lintText(`${body(451)}\nexport {};\n`, { filePath: join(root, 'src/domain/zz-size-probe.ts') });
    expect(long.messages.map((m) => m.ruleId)).toContain('max-lines');
    // A migration is one script in one function, kept as it ran.
    expect(await houseErrors('max-own-lines', 'src/db/migrations/9999_probe.ts', fn('up', 300))).toEqual([]);
  });

  it('the engine names no channel: not as a string, not inside SQL', async () => {
    const planted = "export const isMail = (kind: string) => kind === 'email';\nexport const q = `WHERE kind IN ('x_dm', 'x_engage')`;\n";
    expect(await houseErrors('engine-names-no-channel', 'src/engine/zz-boundary-probe.ts', planted)).toEqual([
      expect.stringContaining("channel word 'email'"),
      expect.stringContaining("channel word 'x_dm'"),
    ]);
    // The same words are a channel's own business outside the engine.
    expect(await houseErrors('engine-names-no-channel', 'src/channels/zz/zz-boundary-probe.ts', planted)).toEqual([]);
  });

  it('only the ledger writer inserts into activity, through Kysely or raw SQL', async () => {
    const planted =
      "import type { Database } from '../../db/database.js';\n" +
      "export const a = (db: Database) => db.insertInto('activity').values([]).execute();\n" +
      'export const b = (db: Database) => db.executeQuery({ sql: `INSERT INTO activity (id) VALUES ($1)`, parameters: [] } as never);\n';
    expect(await houseErrors('ledger-owner', 'src/modules/plays/zz-boundary-probe.ts', planted)).toHaveLength(2);
    expect(await houseErrors('ledger-owner', 'src/domain/ledger.ts', planted)).toEqual([]);
  });

  it("only the lanes' owner sets a lead's lane columns", async () => {
    const planted =
      "import type { Database } from '../../db/database.js';\n" +
      "export const a = (db: Database) => db.updateTable('leads').set({ next_action_at: null, person: 'x' }).execute();\n" +
      'export const b = `UPDATE leads l SET current_step = current_step + 1 WHERE l.id = $1`;\n';
    expect(await houseErrors('lanes-owner', 'src/modules/plays/zz-boundary-probe.ts', planted)).toEqual([
      expect.stringContaining("'next_action_at'"),
      expect.stringContaining("'current_step'"),
    ]);
    expect(await houseErrors('lanes-owner', 'src/domain/lanes.ts', planted)).toEqual([]);
  });

  it("eslint.config.js's lane columns are src/domain/lanes.ts's", async () => {
    const config = (await import(pathToFileURL(join(root, 'eslint.config.js')).href)) as { LANE_COLUMNS: string[] };
    const lanes = await import('../../src/domain/lanes.js');
    expect([...config.LANE_COLUMNS].sort()).toEqual([...lanes.LANE_COLUMNS].sort());
  });

  it('no import circle in src/, type-only imports included', async () => {
    // Planted under a real file's name: src/lib/ids.ts importing a module face that itself imports src/lib/ids.ts.
    const circle = "import type { WorkspacesService } from '../modules/workspaces/index.js';\nexport type W = WorkspacesService;\n";
    expect(await houseErrors('no-import-cycle', 'src/lib/ids.ts', circle)).toEqual([
      expect.stringMatching(/^Import circle: src\/lib\/ids\.ts -> src\/modules\/workspaces\/index\.ts -> .* -> src\/lib\/ids\.ts/),
    ]);
    // A file importing only what does not lead back is fine.
    expect(await houseErrors('no-import-cycle', 'src/lib/ids.ts', "import type { Role } from '../domain/vocabulary.js';\nexport type R = Role;\n")).toEqual([]);
  });
});
