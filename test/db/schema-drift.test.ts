import path from 'node:path';
import { sql } from 'kysely';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/database.js';
import { createTestDatabase } from '../helpers/test-database.js';

// src/db/schema.ts is written by hand; the migrations are the truth. This reads both sides (the TypeScript compiler's
// view of the `DB` interface, and information_schema of a freshly migrated database on the running project's engine)
// and fails on any table, column, nullability, type family or default that disagrees.
//
// The rules, per column (Kysely's ColumnType<Select, Insert, Update> is unwrapped; a plain type T is ColumnType<T, T, T>):
// - nullability: `null` is in the select type iff the column is nullable; a nullable column also takes null on insert,
//   a NOT NULL column never does;
// - family of the select type (minus null), and of what an insert may pass:
//     text, varchar, uuid        -> string or string literals                     (insert: string)
//     smallint, integer, bigint  -> number (int8 too: database.ts parses it as a Number on both engines)
//                                                                                 (insert: number; bigint also string)
//     numeric                    -> string (both drivers return its text)         (insert: string or number)
//     boolean                    -> boolean                                       (insert: boolean)
//     timestamptz, timestamp     -> Date                                          (insert: Date or string)
//     date                       -> Date (both drivers parse it into a Date)      (insert: Date or string)
//     jsonb, json                -> an object, array or unknown (Json<...>), never a primitive; insert is a string,
//                                   the caller's JSON.stringify (pg would send a JS array as a PostgreSQL array)
//     text[] (and varchar[], uuid[]) -> string[]                                  (insert: string[])
//   any other SQL type fails until a rule for it is added here;
// - defaults: a column with a DB default and NOT NULL must be optional on insert (Generated<...>, CreatedAt, or an
//   insert type with `undefined`), and `undefined` in an insert type is only allowed where the DB has a default
//   (a nullable column without one is already optional through `null`); a `never` insert type (GeneratedAlways)
//   needs an identity or generated column;
// - no ColumnType inside a ColumnType (Generated<Timestamp> selects the wrapper object, not a Date).

/** Deliberate disagreements, as `rule:table.column` -> why. Each must still be needed (see the last test). */
const EXCEPTIONS: Record<string, string> = {};

const IGNORED_TABLES = new Set(['kysely_migration', 'kysely_migration_lock']);

type Family = 'string' | 'number' | 'bigint' | 'boolean' | 'date' | 'string[]' | 'array' | 'object' | 'unknown' | 'other';

interface TsColumn {
  typeText: string;
  selectFamilies: Set<Family>;
  selectNull: boolean;
  selectUndefined: boolean;
  insertFamilies: Set<Family>;
  insertNull: boolean;
  insertUndefined: boolean;
  insertNever: boolean;
  nested: boolean;
}

interface DbColumn {
  table_name: string;
  column_name: string;
  is_nullable: 'YES' | 'NO';
  data_type: string;
  udt_name: string;
  column_default: string | null;
  is_identity: 'YES' | 'NO';
  is_generated: 'ALWAYS' | 'NEVER';
}

const schemaPath = path.resolve('src/db/schema.ts');

/** The `DB` interface of schema.ts, as the compiler sees it: table -> column -> its unwrapped select and insert types. */
function readTsSchema(): Map<string, Map<string, TsColumn>> {
  const configPath = path.resolve('tsconfig.json');
  const config = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, path.dirname(configPath));
  const program = ts.createProgram([schemaPath], { ...options, noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(schemaPath)!;
  const root = source.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'DB');
  if (!root) throw new Error('src/db/schema.ts has no `interface DB`');

  const parts = (t: ts.Type): ts.Type[] => (t.isUnion() ? t.types : [t]);
  const columnTypeParts = (t: ts.Type) => {
    const select = t.getProperty('__select__');
    const insert = t.getProperty('__insert__');
    return select && insert ? { select: checker.getTypeOfSymbol(select), insert: checker.getTypeOfSymbol(insert) } : null;
  };
  const familyOf = (t: ts.Type): Family => {
    if (t.flags & ts.TypeFlags.StringLike) return 'string';
    if (t.flags & ts.TypeFlags.NumberLike) return 'number';
    if (t.flags & ts.TypeFlags.BigIntLike) return 'bigint';
    if (t.flags & ts.TypeFlags.BooleanLike) return 'boolean';
    if (t.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any)) return 'unknown';
    if (t.getSymbol()?.getName() === 'Date') return 'date';
    if (checker.isArrayType(t)) {
      const [element] = checker.getTypeArguments(t as ts.TypeReference);
      return parts(element).every((e) => e.flags & ts.TypeFlags.StringLike) ? 'string[]' : 'array';
    }
    if (t.flags & ts.TypeFlags.Object) return 'object';
    return 'other';
  };

  const tables = new Map<string, Map<string, TsColumn>>();
  for (const tableMember of root.members) {
    if (!ts.isPropertySignature(tableMember)) continue;
    const tableName = tableMember.name.getText(source);
    const tableType = checker.getTypeFromTypeNode(tableMember.type!);
    const columns = new Map<string, TsColumn>();
    for (const prop of tableType.getProperties()) {
      const decl = prop.valueDeclaration;
      const typeText = decl && ts.isPropertySignature(decl) && decl.type ? decl.type.getText(decl.getSourceFile()) : '?';
      const col: TsColumn = {
        typeText,
        selectFamilies: new Set(),
        selectNull: false,
        selectUndefined: false,
        insertFamilies: new Set(),
        insertNull: false,
        insertUndefined: false,
        insertNever: false,
        nested: false,
      };
      const addSelect = (t: ts.Type) => {
        for (const p of parts(t)) {
          if (p.flags & ts.TypeFlags.Null) col.selectNull = true;
          else if (p.flags & ts.TypeFlags.Undefined) col.selectUndefined = true;
          else if (columnTypeParts(p)) col.nested = true;
          else col.selectFamilies.add(familyOf(p));
        }
      };
      const addInsert = (t: ts.Type) => {
        if (t.flags & ts.TypeFlags.Never) col.insertNever = true;
        for (const p of parts(t)) {
          if (p.flags & ts.TypeFlags.Null) col.insertNull = true;
          else if (p.flags & ts.TypeFlags.Undefined) col.insertUndefined = true;
          else if (p.flags & ts.TypeFlags.Never) col.insertNever = true;
          else if (columnTypeParts(p)) col.nested = true;
          else col.insertFamilies.add(familyOf(p));
        }
      };
      for (const p of parts(checker.getTypeOfSymbol(prop))) {
        const wrapped = columnTypeParts(p);
        if (wrapped) {
          addSelect(wrapped.select);
          addInsert(wrapped.insert);
        } else {
          addSelect(p);
          addInsert(p);
        }
      }
      columns.set(prop.getName(), col);
    }
    tables.set(tableName, columns);
  }
  return tables;
}

interface SqlRule {
  select: Family[];
  insert: Family[];
}
const STRINGS: SqlRule = { select: ['string'], insert: ['string'] };
const TIMES: SqlRule = { select: ['date'], insert: ['date', 'string'] };
const JSON_RULE: SqlRule = { select: ['object', 'array', 'string[]', 'unknown'], insert: ['string'] };
const SQL_RULES: Record<string, SqlRule> = {
  text: STRINGS,
  'character varying': STRINGS,
  uuid: STRINGS,
  smallint: { select: ['number'], insert: ['number'] },
  integer: { select: ['number'], insert: ['number'] },
  bigint: { select: ['number'], insert: ['number', 'string'] },
  numeric: { select: ['string'], insert: ['string', 'number'] },
  // float4: both drivers parse it with parseFloat (a reply's and an inbound record's confidence, migration 0035).
  real: { select: ['number'], insert: ['number'] },
  boolean: { select: ['boolean'], insert: ['boolean'] },
  'timestamp with time zone': TIMES,
  'timestamp without time zone': TIMES,
  date: TIMES,
  jsonb: JSON_RULE,
  json: JSON_RULE,
  'ARRAY:_text': { select: ['string[]'], insert: ['string[]'] },
  'ARRAY:_varchar': { select: ['string[]'], insert: ['string[]'] },
  'ARRAY:_uuid': { select: ['string[]'], insert: ['string[]'] },
};

const describeFamilies = (families: Set<Family>) => [...families].sort().join(' | ') || 'nothing';

type DbSchema = Map<string, Map<string, DbColumn>>;
type TsSchema = Map<string, Map<string, TsColumn>>;
/** `key` is `rule:table` or `rule:table.column`, the form EXCEPTIONS is keyed by. */
interface Problem {
  key: string;
  message: string;
}

/** Every column present on both sides, for the per-column rules. */
function bothSides(dbTables: DbSchema, tsTables: TsSchema) {
  const out: { table: string; column: string; db: DbColumn; ts: TsColumn }[] = [];
  for (const [table, dbColumns] of dbTables) {
    const tsColumns = tsTables.get(table);
    if (!tsColumns) continue;
    for (const [column, db] of dbColumns) {
      const tsColumn = tsColumns.get(column);
      if (tsColumn) out.push({ table, column, db, ts: tsColumn });
    }
  }
  return out;
}

const RULES = {
  table(dbTables: DbSchema, tsTables: TsSchema): Problem[] {
    const problems: Problem[] = [];
    for (const table of dbTables.keys())
      if (!tsTables.has(table)) problems.push({ key: `table:${table}`, message: `${table}: in the database, missing from DB in schema.ts` });
    for (const table of tsTables.keys())
      if (!dbTables.has(table)) problems.push({ key: `table:${table}`, message: `${table}: in DB in schema.ts, not in the database` });
    return problems;
  },

  column(dbTables: DbSchema, tsTables: TsSchema): Problem[] {
    const problems: Problem[] = [];
    for (const [table, dbColumns] of dbTables) {
      const tsColumns = tsTables.get(table);
      if (!tsColumns) continue;
      for (const column of dbColumns.keys())
        if (!tsColumns.has(column)) problems.push({ key: `column:${table}.${column}`, message: `${table}.${column}: in the database, missing from schema.ts` });
      for (const column of tsColumns.keys())
        if (!dbColumns.has(column)) problems.push({ key: `column:${table}.${column}`, message: `${table}.${column}: in schema.ts, not in the database` });
    }
    return problems;
  },

  nullability(dbTables: DbSchema, tsTables: TsSchema): Problem[] {
    const problems: Problem[] = [];
    for (const { table, column, db, ts: c } of bothSides(dbTables, tsTables)) {
      const key = `nullability:${table}.${column}`;
      const nullable = db.is_nullable === 'YES';
      if (c.selectNull !== nullable)
        problems.push({
          key,
          message: `${table}.${column}: the column is ${nullable ? 'nullable' : 'NOT NULL'}, its type \`${c.typeText}\` ${c.selectNull ? 'selects' : 'never selects'} null`,
        });
      else if (nullable && !c.insertNull) problems.push({ key, message: `${table}.${column}: nullable, but \`${c.typeText}\` cannot insert null` });
      else if (!nullable && c.insertNull) problems.push({ key, message: `${table}.${column}: NOT NULL, but \`${c.typeText}\` inserts null` });
      if (c.selectUndefined) problems.push({ key, message: `${table}.${column}: \`${c.typeText}\` selects undefined; a column is a value or null` });
    }
    return problems;
  },

  family(dbTables: DbSchema, tsTables: TsSchema): Problem[] {
    const problems: Problem[] = [];
    for (const { table, column, db, ts: c } of bothSides(dbTables, tsTables)) {
      const key = `family:${table}.${column}`;
      const sqlType = db.data_type === 'ARRAY' ? `ARRAY:${db.udt_name}` : db.data_type;
      const rule = SQL_RULES[sqlType];
      if (!rule) {
        problems.push({ key, message: `${table}.${column}: no rule for SQL type ${sqlType}; add one to SQL_RULES in this test` });
        continue;
      }
      if (c.nested) problems.push({ key, message: `${table}.${column}: \`${c.typeText}\` nests a ColumnType inside a ColumnType` });
      const badSelect = [...c.selectFamilies].filter((f) => !rule.select.includes(f));
      if (badSelect.length > 0 || c.selectFamilies.size === 0)
        problems.push({
          key,
          message: `${table}.${column}: ${sqlType} selects as ${rule.select.join(' or ')}, but \`${c.typeText}\` selects ${describeFamilies(c.selectFamilies)}`,
        });
      const badInsert = [...c.insertFamilies].filter((f) => !rule.insert.includes(f));
      if (badInsert.length > 0)
        problems.push({
          key,
          message: `${table}.${column}: ${sqlType} takes ${rule.insert.join(' or ')} on insert, but \`${c.typeText}\` inserts ${describeFamilies(c.insertFamilies)}`,
        });
    }
    return problems;
  },

  default(dbTables: DbSchema, tsTables: TsSchema): Problem[] {
    const problems: Problem[] = [];
    for (const { table, column, db, ts: c } of bothSides(dbTables, tsTables)) {
      const key = `default:${table}.${column}`;
      const generated = db.is_identity === 'YES' || db.is_generated === 'ALWAYS';
      const hasDefault = db.column_default !== null || generated;
      if (hasDefault && db.is_nullable === 'NO' && !c.insertUndefined && !c.insertNever)
        problems.push({
          key,
          message: `${table}.${column}: has DEFAULT ${db.column_default}, but \`${c.typeText}\` must be given on insert (use Generated<...> or CreatedAt)`,
        });
      if (!hasDefault && c.insertUndefined)
        problems.push({ key, message: `${table}.${column}: has no DB default, but \`${c.typeText}\` may be left out on insert` });
      if (c.insertNever && !generated)
        problems.push({ key, message: `${table}.${column}: \`${c.typeText}\` can never be inserted, but the column is not generated` });
    }
    return problems;
  },
};

/** The messages of the problems that are not listed in EXCEPTIONS. */
const unexcepted = (problems: Problem[]) => problems.filter((p) => !(p.key in EXCEPTIONS)).map((p) => p.message);

describe('src/db/schema.ts agrees with the migrated database', () => {
  let handle: DatabaseHandle | undefined;
  let dbTables: DbSchema;
  let tsTables: TsSchema;

  beforeAll(async () => {
    tsTables = readTsSchema();
    handle = await createTestDatabase();
    const { rows } = await sql<DbColumn>`
      SELECT c.table_name, c.column_name, c.is_nullable, c.data_type, c.udt_name, c.column_default, c.is_identity, c.is_generated
      FROM information_schema.columns c
      JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
      ORDER BY c.table_name, c.ordinal_position`.execute(handle.db);
    dbTables = new Map();
    for (const row of rows) {
      if (IGNORED_TABLES.has(row.table_name)) continue;
      if (!dbTables.has(row.table_name)) dbTables.set(row.table_name, new Map());
      dbTables.get(row.table_name)!.set(row.column_name, row);
    }
  });
  afterAll(async () => handle?.close());

  it('reads both sides', () => {
    expect(dbTables.size).toBeGreaterThan(10);
    expect(tsTables.size).toBeGreaterThan(10);
  });

  it('has the same tables', () => expect(unexcepted(RULES.table(dbTables, tsTables))).toEqual([]));
  it('has the same columns in every table', () => expect(unexcepted(RULES.column(dbTables, tsTables))).toEqual([]));
  it('agrees on nullability', () => expect(unexcepted(RULES.nullability(dbTables, tsTables))).toEqual([]));
  it('agrees on the type family of every column', () => expect(unexcepted(RULES.family(dbTables, tsTables))).toEqual([]));
  it('marks exactly the columns with a DB default as optional on insert', () => expect(unexcepted(RULES.default(dbTables, tsTables))).toEqual([]));

  it('lists no exception that is no longer needed', () => {
    const found = new Set(Object.values(RULES).flatMap((rule) => rule(dbTables, tsTables).map((p) => p.key)));
    expect(Object.keys(EXCEPTIONS).filter((key) => !found.has(key))).toEqual([]);
  });
});
