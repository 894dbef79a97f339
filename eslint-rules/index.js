// The house's own ESLint rules (docs/lint.md "House rules"): the owners of shared things (docs/architecture.md
// "Owners"), and no import circle in src/. Each rule is checked against planted violations in
// test/lint/boundaries.test.ts.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const posix = (p) => p.split(sep).join('/');

/** The names a file under src/engine may not write: channels and the spec's step kinds (docs/architecture.md "Channels"). */
export const CHANNEL_WORDS = ['email', 'linkedin', 'x', 'instagram', 'sandbox', 'connect', 'message', 'engage', 'x_dm', 'x_engage', 'instagram_dm'];
const WORD = new RegExp(`^(${CHANNEL_WORDS.join('|')})$`);
// A quoted channel word inside SQL text: `IN ('x_dm', 'x_engage')`.
const QUOTED_WORD = new RegExp(`'(${CHANNEL_WORDS.join('|')})'`);

const engineNamesNoChannel = {
  meta: {
    type: 'problem',
    docs: { description: 'The engine knows channels only through their descriptors: no channel or step-kind name in src/engine.' },
    schema: [],
    messages: {
      named: "The engine names the channel word '{{word}}': ask the channel's descriptor (src/channels/descriptor.ts) instead (docs/architecture.md).",
    },
  },
  create(context) {
    const report = (node, word) => context.report({ node, messageId: 'named', data: { word } });
    return {
      Literal(node) {
        if (typeof node.value === 'string' && WORD.test(node.value)) report(node, node.value);
      },
      TemplateElement(node) {
        const m = QUOTED_WORD.exec(node.value.raw);
        if (m) report(node, m[1]);
        else if (node.parent.quasis.length === 1 && WORD.test(node.value.raw)) report(node, node.value.raw);
      },
    };
  },
};

/** `X.insertInto('activity')` anywhere but the ledger's writer. */
const ledgerOwner = {
  meta: {
    type: 'problem',
    docs: { description: 'Only src/domain/ledger.ts inserts into the activity ledger (appendLedger); everyone else appends through it.' },
    schema: [],
    messages: { insert: 'Append to the activity ledger through appendLedger (src/domain/ledger.ts), its one writer (docs/architecture.md).' },
  },
  create(context) {
    const isActivity = (arg) =>
      arg &&
      ((arg.type === 'Literal' && arg.value === 'activity') || (arg.type === 'TemplateLiteral' && arg.quasis.map((q) => q.value.raw).join('') === 'activity'));
    const rawInsert = /insert\s+into\s+"?activity"?[\s(]/i;
    return {
      CallExpression(node) {
        if (node.callee.type === 'MemberExpression' && node.callee.property.name === 'insertInto' && isActivity(node.arguments[0]))
          context.report({ node, messageId: 'insert' });
      },
      TemplateElement(node) {
        if (rawInsert.test(node.value.raw)) context.report({ node, messageId: 'insert' });
      },
    };
  },
};

/**
 * A write of a lead's lane columns (the columns src/domain/lanes.ts LANE_COLUMNS names) anywhere but the lanes'
 * owner: a Kysely `.set({...})` naming one, or raw SQL `UPDATE leads ... SET <column> =`.
 * Options: `{ columns: string[] }`.
 */
const lanesOwner = {
  meta: {
    type: 'problem',
    docs: { description: "Only src/domain/lanes.ts sets a lead's lane (sequence) columns." },
    schema: [{ type: 'object', properties: { columns: { type: 'array', items: { type: 'string' } } }, additionalProperties: false }],
    messages: { write: "The lane column '{{column}}' is set only by a transition of src/domain/lanes.ts, the lanes' owner (docs/architecture.md)." },
  },
  create(context) {
    const columns = new Set(context.options[0]?.columns ?? []);
    if (columns.size === 0) return {};
    const keyName = (p) => (p.key.type === 'Identifier' ? p.key.name : p.key.type === 'Literal' ? String(p.key.value) : null);
    const sqlSet = new RegExp(`update\\s+"?leads"?\\b[\\s\\S]*?\\bset\\b[\\s\\S]*?\\b(${[...columns].join('|')})\\s*=`, 'i');
    return {
      CallExpression(node) {
        if (node.callee.type !== 'MemberExpression' || node.callee.property.name !== 'set') return;
        const arg = node.arguments[0];
        if (arg?.type !== 'ObjectExpression') return;
        for (const p of arg.properties)
          if (p.type === 'Property' && columns.has(keyName(p))) context.report({ node: p, messageId: 'write', data: { column: keyName(p) } });
      },
      TemplateLiteral(node) {
        const text = node.quasis.map((q) => q.value.raw).join(' ');
        const m = sqlSet.exec(text);
        if (m) context.report({ node, messageId: 'write', data: { column: m[1] } });
      },
    };
  },
};

// The import graph of src/, type-only imports and re-exports included, built once per process.
let graph = null;
function importGraph(srcRoot) {
  if (graph?.root === srcRoot) return graph;
  const files = [];
  (function walk(dir) {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name)) files.push(p);
    }
  })(srcRoot);
  const known = new Set(files);
  const edges = new Map();
  for (const f of files) {
    const out = [];
    for (const i of ts.preProcessFile(readFileSync(f, 'utf8'), true, true).importedFiles) {
      if (!i.fileName.startsWith('.')) continue;
      const r = resolve(dirname(f), i.fileName);
      const hit = [r.replace(/\.js$/, '.ts'), r.replace(/\.js$/, '.tsx'), `${r}.ts`, join(r, 'index.ts')].find((c) => known.has(c));
      if (hit) out.push({ to: hit, specifier: i.fileName });
    }
    edges.set(f, out);
  }
  graph = { root: srcRoot, edges };
  return graph;
}

/**
 * The shortest chain of imports from `from` back to `start` through the files on disk, or null when there is none.
 * `start`'s own imports on disk are not followed: the text being linted may differ from the file on disk.
 */
function pathBack(g, start, from) {
  const prev = new Map([[from, null]]);
  const queue = [from];
  while (queue.length) {
    const v = queue.shift();
    for (const { to } of g.edges.get(v) ?? []) {
      if (to === start) {
        const path = [];
        for (let w = v; w; w = prev.get(w)) path.unshift(w);
        return path;
      }
      if (!prev.has(to)) {
        prev.set(to, v);
        queue.push(to);
      }
    }
  }
  return null;
}

/**
 * No import circle in src/, type-only imports included: a file that imports (or re-exports from) a file that leads
 * back to it. Reported at the import that enters the circle, with the circle spelled out. The linted text's own imports are joined to
 * the graph of the other files on disk (the planted probes of test/lint/boundaries.test.ts), so a probe planted under a real file's name is judged by its own imports.
 */
const noImportCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'No import circle in src/, type-only imports included.' },
    schema: [],
    messages: { cycle: 'Import circle: {{path}}. Move what both sides need into a file neither imports (docs/architecture.md).' },
  },
  create(context) {
    const file = context.filename;
    const srcRoot = join(context.cwd, 'src');
    if (!file.startsWith(srcRoot + sep) || /\.test\.tsx?$/.test(file)) return {};
    const g = importGraph(srcRoot);
    const rel = (p) => posix(relative(context.cwd, p));
    const check = (node) => {
      const spec = node.source?.value;
      if (typeof spec !== 'string' || !spec.startsWith('.')) return;
      const r = resolve(dirname(file), spec);
      const to = [r.replace(/\.js$/, '.ts'), r.replace(/\.js$/, '.tsx'), `${r}.ts`, join(r, 'index.ts')].find((c) => g.edges.has(c) || c === file);
      if (!to) return;
      const path = to === file ? [] : pathBack(g, file, to);
      if (!path) return;
      context.report({ node, messageId: 'cycle', data: { path: [file, ...path, file].map(rel).join(' -> ') } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check };
  },
};

/**
 * No function longer than `max` own lines (default 100): its lines from the first to the last, less those of the
 * functions written inside it, so a factory of small closures is judged by what it does itself, and each closure by
 * its own body (docs/lint.md "House rules").
 */
const maxOwnLines = {
  meta: {
    type: 'suggestion',
    docs: { description: 'No function longer than 100 own lines (nested functions not counted).' },
    schema: [{ type: 'object', properties: { max: { type: 'integer', minimum: 1 } }, additionalProperties: false }],
    messages: { long: '{{name}} has {{own}} own lines (nested functions aside); at most {{max}}: split it into named steps.' },
  },
  create(context) {
    const max = context.options[0]?.max ?? 100;
    const stack = [];
    const span = (node) => node.loc.end.line - node.loc.start.line + 1;
    const nameOf = (node) =>
      node.id?.name ??
      (node.parent?.type === 'VariableDeclarator' && node.parent.id.type === 'Identifier' ? node.parent.id.name : null) ??
      (node.parent?.type === 'Property' || node.parent?.type === 'MethodDefinition' ? (node.parent.key?.name ?? null) : null);
    const enter = () => stack.push(0);
    const exit = (node) => {
      const nested = stack.pop();
      const own = span(node) - nested;
      if (own > max) {
        const name = nameOf(node);
        context.report({ node, messageId: 'long', data: { name: name ? `Function '${name}'` : 'A function', own: String(own), max: String(max) } });
      }
      if (stack.length > 0) stack[stack.length - 1] += span(node);
    };
    return {
      FunctionDeclaration: enter,
      FunctionExpression: enter,
      ArrowFunctionExpression: enter,
      'FunctionDeclaration:exit': exit,
      'FunctionExpression:exit': exit,
      'ArrowFunctionExpression:exit': exit,
    };
  },
};

export default {
  meta: { name: 'outreach-house' },
  rules: {
    'max-own-lines': maxOwnLines,
    'engine-names-no-channel': engineNamesNoChannel,
    'ledger-owner': ledgerOwner,
    'lanes-owner': lanesOwner,
    'no-import-cycle': noImportCycle,
  },
};
