import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { LANE_COLUMNS } from '../../src/domain/lanes.js';
import { dbEngine } from '../helpers/test-database.js';

// domain/lanes.ts is the only code that sets a lead's lane columns (LANE_COLUMNS). This scan is the backstop for the
// ESLint rule: it reads every file of src/ but the lanes' own files (src/domain/lanes.ts, src/domain/lanes/), the
// migrations and the tests, and reports each write of a lane column to `leads`, as
// - a Kysely `.set(…)` on `updateTable('leads')`: the keys of its object (spreads, `cond && {…}` and a callback's
//   returned object included; a spread variable is followed to its declaration or type in the same file);
// - raw SQL (any string or template literal) `UPDATE leads [alias] SET a = …, b = …`: the assignment targets.
// What it cannot read (a spread of a call's result, a column named by a placeholder) is reported as `?`, so it fails
// rather than lets a write through. Inserts (a new lead) are not writes of a lane here: they take enteringLane's values.

const ROOT = join(import.meta.dirname, '..', '..');
const LANES: ReadonlySet<string> = new Set(LANE_COLUMNS);
const UNKNOWN = '?';

/** One write of lane columns: where, and which columns (`?`: one the scan cannot name). */
interface LaneWrite {
  file: string;
  line: number;
  columns: string[];
}

/** The lane columns (and unreadable ones) that `text`, the file at `file` (repository-relative), writes to `leads`. */
function laneWrites(file: string, text: string): LaneWrite[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: LaneWrite[] = [];
  const report = (node: ts.Node, columns: string[]) => {
    const hit = columns.filter((c) => c === UNKNOWN || LANES.has(c));
    if (hit.length > 0) found.push({ file, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, columns: [...new Set(hit)].sort() });
  };
  const visit = (node: ts.Node) => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === 'set' &&
      updatesLeads(node.expression.expression)
    ) {
      const [first] = node.arguments;
      if (first && node.arguments.length === 2) report(node, [ts.isStringLiteralLike(first) ? first.text : UNKNOWN]);
      else if (first) report(node, keysOf(first, source, new Set()));
    }
    if (ts.isStringLiteralLike(node) || ts.isTemplateExpression(node)) report(node, sqlSetTargets(templateText(node)));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Whether a Kysely builder chain starts at `updateTable('leads')` (or `'leads as l'`). */
function updatesLeads(receiver: ts.Expression): boolean {
  let node: ts.Expression = receiver;
  for (;;) {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const [table] = node.arguments;
      if (node.expression.name.text === 'updateTable') return !!table && ts.isStringLiteralLike(table) && /^leads(\s|$)/.test(table.text);
      node = node.expression.expression;
    } else if (ts.isPropertyAccessExpression(node) || ts.isParenthesizedExpression(node) || ts.isNonNullExpression(node)) {
      node = node.expression;
    } else return false;
  }
}

/** The keys an expression given to `.set()` writes. */
function keysOf(expr: ts.Expression, source: ts.SourceFile, seen: Set<string>): string[] {
  if (ts.isParenthesizedExpression(expr) || ts.isAsExpression(expr) || ts.isSatisfiesExpression(expr) || ts.isNonNullExpression(expr)) {
    return keysOf(expr.expression, source, seen);
  }
  if (ts.isObjectLiteralExpression(expr)) {
    return expr.properties.flatMap((p) => {
      if (ts.isSpreadAssignment(p)) return keysOf(p.expression, source, seen);
      const name = p.name;
      if (name && (ts.isIdentifier(name) || ts.isStringLiteralLike(name))) return [name.text];
      return [UNKNOWN];
    });
  }
  if (ts.isBinaryExpression(expr)) {
    const op = expr.operatorToken.kind;
    if (op === ts.SyntaxKind.AmpersandAmpersandToken) return keysOf(expr.right, source, seen);
    if (op === ts.SyntaxKind.BarBarToken || op === ts.SyntaxKind.QuestionQuestionToken) {
      return [...keysOf(expr.left, source, seen), ...keysOf(expr.right, source, seen)];
    }
  }
  if (ts.isConditionalExpression(expr)) return [...keysOf(expr.whenTrue, source, seen), ...keysOf(expr.whenFalse, source, seen)];
  if (ts.isArrowFunction(expr) || ts.isFunctionExpression(expr)) {
    if (!ts.isBlock(expr.body)) return keysOf(expr.body, source, seen);
    const returned: string[] = [];
    const visit = (n: ts.Node) => {
      if (ts.isReturnStatement(n) && n.expression) returned.push(...keysOf(n.expression, source, seen));
      else if (!ts.isFunctionLike(n)) ts.forEachChild(n, visit);
    };
    ts.forEachChild(expr.body, visit);
    return returned;
  }
  if (expr.kind === ts.SyntaxKind.NullKeyword || expr.kind === ts.SyntaxKind.FalseKeyword || (ts.isIdentifier(expr) && expr.text === 'undefined')) return [];
  if (ts.isStringLiteralLike(expr) || ts.isNumericLiteral(expr)) return [];
  if (ts.isIdentifier(expr) && !seen.has(expr.text)) return declaredKeys(expr.text, source, new Set([...seen, expr.text]));
  return [UNKNOWN];
}

/** The keys of every variable or parameter named `name` in the file: its initializer's, else its declared type's. */
function declaredKeys(name: string, source: ts.SourceFile, seen: Set<string>): string[] {
  const keys: string[] = [];
  let declared = false;
  const visit = (n: ts.Node) => {
    if ((ts.isVariableDeclaration(n) || ts.isParameter(n)) && ts.isIdentifier(n.name) && n.name.text === name) {
      declared = true;
      if (n.type) keys.push(...typeKeys(n.type, source, seen));
      else if (n.initializer) keys.push(...keysOf(n.initializer, source, seen));
      else keys.push(UNKNOWN);
    }
    ts.forEachChild(n, visit);
  };
  visit(source);
  return declared ? keys : [UNKNOWN];
}

/** The property names of a type written in the file (a literal, an interface or alias of the file, Partial/Pick of one). */
function typeKeys(type: ts.TypeNode, source: ts.SourceFile, seen: Set<string>): string[] {
  if (ts.isTypeLiteralNode(type)) return membersOf(type.members);
  if (ts.isParenthesizedTypeNode(type)) return typeKeys(type.type, source, seen);
  if (ts.isIntersectionTypeNode(type) || ts.isUnionTypeNode(type)) return type.types.flatMap((t) => typeKeys(t, source, seen));
  if (ts.isTypeReferenceNode(type) && ts.isIdentifier(type.typeName)) {
    const name = type.typeName.text;
    const [arg, picked] = type.typeArguments ?? [];
    if (['Partial', 'Readonly', 'Required'].includes(name) && arg) return typeKeys(arg, source, seen);
    if (name === 'Pick' && picked) return literalKeys(picked);
    if (seen.has(`type:${name}`)) return [UNKNOWN];
    const inner = new Set([...seen, `type:${name}`]);
    for (const statement of source.statements) {
      if (ts.isInterfaceDeclaration(statement) && statement.name.text === name) return membersOf(statement.members);
      if (ts.isTypeAliasDeclaration(statement) && statement.name.text === name) return typeKeys(statement.type, source, inner);
    }
  }
  return [UNKNOWN];
}

function membersOf(members: ts.NodeArray<ts.TypeElement>): string[] {
  return members.map((m) => (m.name && (ts.isIdentifier(m.name) || ts.isStringLiteralLike(m.name)) ? m.name.text : UNKNOWN));
}

function literalKeys(type: ts.TypeNode): string[] {
  if (ts.isUnionTypeNode(type)) return type.types.flatMap(literalKeys);
  if (ts.isLiteralTypeNode(type) && ts.isStringLiteral(type.literal)) return [type.literal.text];
  return [UNKNOWN];
}

/** A string or template literal's text, each placeholder as `${?}`. */
function templateText(node: ts.StringLiteralLike | ts.TemplateExpression): string {
  if (!ts.isTemplateExpression(node)) return node.text;
  return node.head.text + node.templateSpans.map((s) => '${?}' + s.literal.text).join('');
}

/** The columns `UPDATE leads … SET` statements in an SQL text assign (`?` for a placeholder in a column's place). */
function sqlSetTargets(text: string): string[] {
  const sqlText = text.replace(/--[^\n]*/g, '');
  const targets: string[] = [];
  const update = /\bUPDATE\s+leads(?:\s+(?:AS\s+)?(?!SET\b)\w+)?\s+SET\b/gi;
  for (let m = update.exec(sqlText); m; m = update.exec(sqlText)) {
    let depth = 0;
    let piece = '';
    const pieces: string[] = [];
    for (let i = m.index + m[0].length; i < sqlText.length; i++) {
      const c = sqlText[i];
      if (depth === 0 && /^\s(FROM|WHERE|RETURNING)\b/i.test(sqlText.slice(i, i + 11))) break;
      if (c === '(') depth++;
      if (c === ')' && --depth < 0) break;
      if (c === ',' && depth === 0) {
        pieces.push(piece);
        piece = '';
      } else piece += c;
    }
    pieces.push(piece);
    for (const p of pieces) {
      const column = /^\s*(?:\w+\.)?"?(\w+)"?\s*=/.exec(p);
      targets.push(column ? column[1] : UNKNOWN);
    }
  }
  return targets;
}

/** Every .ts/.tsx file under src/ the rule applies to, repository-relative with `/`. */
function scannedFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const rel = relative(ROOT, path).split(sep).join('/');
      if (entry.isDirectory()) {
        if (rel !== 'src/db/migrations' && rel !== 'src/domain/lanes') walk(path);
      } else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) && rel !== 'src/domain/lanes.ts') files.push(rel);
    }
  };
  walk(join(ROOT, 'src'));
  return files;
}

describe.skipIf(dbEngine() === 'postgres')('the lane columns have one writer, domain/lanes.ts (run once, in the PGlite project)', () => {
  const at = (text: string) => laneWrites('src/modules/zz/probe.ts', text).map((w) => w.columns);

  it('finds a lane column in a Kysely set on leads, however the object is built', () => {
    expect(at(`await db.updateTable('leads').set({ next_action_at: null, updated_at: now }).execute();`)).toEqual([['next_action_at']]);
    expect(at(`await trx.updateTable('leads as l').where('l.id', '=', id).set('current_step', 1).execute();`)).toEqual([['current_step']]);
    expect(at(`db.updateTable('leads').set((eb) => ({ updated_at: now, ...(done && { stage: 'failed', automation_stopped: true }) }));`)).toEqual([
      ['automation_stopped', 'stage'],
    ]);
    expect(at(`db.updateTable('leads').set((eb) => { return { ...(x ? { waiting_for: null } : {}) }; });`)).toEqual([['waiting_for']]);
    expect(at(`const lane = { sequence_id: s, current_step: 0 };\ndb.updateTable('leads').set({ ...lane, updated_at: now });`)).toEqual([
      ['current_step', 'sequence_id'],
    ]);
    expect(at(`interface Lane { snoozed_until: Date }\nfunction f(p: Partial<Lane>) { return db.updateTable('leads').set({ ...p }); }`)).toEqual([
      ['snoozed_until'],
    ]);
    expect(at(`db.updateTable('leads').set({ ...laneOf(x) });`)).toEqual([['?']]);
  });

  it('finds a lane column assigned by raw SQL on leads, aliased or not', () => {
    expect(
      at('sql`UPDATE leads l SET last_error = NULL, l.inflight_key = NULL,\n  observe_next_at = CASE WHEN a THEN NULL ELSE b END FROM v WHERE l.id = v.id`'),
    ).toEqual([['inflight_key', 'observe_next_at']]);
    expect(at("sql`UPDATE leads SET waiting_for = 'task', next_action_at = NULL, updated_at = ${now} WHERE id IN (${ids})`")).toEqual([
      ['next_action_at', 'waiting_for'],
    ]);
    expect(at('sql`update leads set ${sql.ref(column)} = ${at} where id = ${id}`')).toEqual([['?']]);
    expect(at("const q = 'UPDATE leads AS x SET stage = $1 WHERE id = $2';")).toEqual([['stage']]);
  });

  it('leaves other tables, other columns and reads alone', () => {
    expect(at(`db.updateTable('tasks').set({ sequence_id: null, variant_key: null });`)).toEqual([]);
    expect(at('sql`UPDATE tasks SET sequence_id = NULL WHERE lead_id = ${id}`')).toEqual([]);
    expect(at("sql`UPDATE leads SET last_error = NULL, updated_at = ${now} WHERE stage = 'failed' AND next_action_at IS NULL`")).toEqual([]);
    expect(at(`interface Taken { email?: string }\nfunction f(fields: Taken) { return db.updateTable('leads').set({ ...fields, updated_at: now }); }`)).toEqual(
      [],
    );
    expect(at("db.selectFrom('leads').select(['next_action_at', 'stage']).where('automation_stopped', '=', false);")).toEqual([]);
    expect(at("db.insertInto('leads').values({ id, sequence_id: s, current_step: 0 });")).toEqual([]);
  });

  it("reads the lanes' own files as writers: the scan sees the real transitions", () => {
    for (const file of ['src/domain/lanes/send.ts', 'src/domain/lanes/hear.ts', 'src/domain/lanes/end.ts', 'src/domain/lanes/enter.ts']) {
      expect(laneWrites(file, readFileSync(join(ROOT, file), 'utf8')).length, file).toBeGreaterThan(0);
    }
  });

  it('no file of src/ but domain/lanes writes a lane column', () => {
    const files = scannedFiles();
    expect(files.length).toBeGreaterThan(100);
    expect(files).toContain('src/engine/sql/claimWatched.ts');
    const writes = files.flatMap((file) => laneWrites(file, readFileSync(join(ROOT, file), 'utf8')));
    expect(writes.map((w) => `${w.file}:${w.line} sets ${w.columns.join(', ')}`)).toEqual([]);
  });
});
