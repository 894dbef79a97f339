// tools/list is read by an agent on every connection and counts against its context, so what it advertises is the
// route schemas rewritten into shorter JSON Schema that accepts exactly the same documents. Validation never uses
// the rewritten form: tool input is checked against the TypeBox schema itself.

type Schema = Record<string, unknown>;

const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const SHORT_UUID_PATTERN = '^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$';
const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);
// Keywords after which a schema no longer applies only to values of its own `type`, so it cannot absorb `null`.
const NOT_NULLABLE = ['anyOf', 'oneOf', 'allOf', 'not', '$ref', 'if', 'nullable'];

const isNull = (s: unknown) => isSchema(s) && s.type === 'null' && Object.keys(s).length === 1;

/** `{type: T, const: v}` and nothing else: TypeBox's spelling of one value of a union of literals. */
const literalOf = (s: unknown): { type: unknown; value: unknown } | undefined =>
  isSchema(s) && 'const' in s && Object.keys(s).every((k) => k === 'type' || k === 'const') ? { type: s.type, value: s.const } : undefined;

/** A description on both the union and its branch is kept once, the branch's first (it is the more specific). */
function joinDescriptions(a: unknown, b: unknown): string | undefined {
  const parts = [a, b].filter((d): d is string => typeof d === 'string' && d.length > 0);
  return parts.length ? [...new Set(parts)].join('; ') : undefined;
}

/** A union of literals of one type becomes an enum: `anyOf: [{const: "a"}, {const: "b"}]` → `enum: ["a", "b"]`. */
function literalsToEnum(wrapper: Schema, branches: unknown[]): Schema | undefined {
  const literals = branches.map(literalOf);
  if (literals.length < 2 || literals.some((l) => !l) || new Set(literals.map((l) => String(l!.type))).size !== 1) return undefined;
  const { anyOf: _anyOf, ...rest } = wrapper;
  const type = literals[0]!.type;
  return { ...(type !== undefined && { type }), enum: literals.map((l) => l!.value), ...rest };
}

/**
 * `anyOf: [S, {type: null}]` becomes S with `type: [T, "null"]`: every other keyword of S (format, pattern, minimum,
 * properties, items, …) constrains only values of type T, so null still passes exactly as the union let it.
 */
function nullableToType(wrapper: Schema, branches: unknown[]): Schema | undefined {
  if (branches.length !== 2) return undefined;
  const nullAt = branches.findIndex(isNull);
  if (nullAt < 0) return undefined;
  const inner = branches[1 - nullAt];
  if (!isSchema(inner) || typeof inner.type !== 'string' || NOT_NULLABLE.some((k) => k in inner)) return undefined;
  const { anyOf: _anyOf, description: outer, ...rest } = wrapper;
  const { const: single, enum: values, description: own, ...schema } = inner;
  const merged: Schema = { ...schema, type: [inner.type, 'null'], ...rest };
  if ('const' in inner) merged.enum = [single, null];
  else if (Array.isArray(values)) merged.enum = [...(values as unknown[]), null];
  const description = joinDescriptions(own, outer);
  if (description) merged.description = description;
  return merged;
}

function compactNode(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(compactNode);
  if (!isSchema(node)) return node;
  let out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    // `properties` maps names to schemas; everything else that holds schemas is a schema or an array of them.
    if (key === 'properties' && isSchema(value)) out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, compactNode(v)]));
    else if (key === 'enum' || key === 'const' || key === 'default' || key === 'required' || key === 'examples') out[key] = value;
    else out[key] = compactNode(value);
  }
  if (Array.isArray(out.anyOf)) out = literalsToEnum(out, out.anyOf) ?? nullableToType(out, out.anyOf) ?? out;
  // The uuid pattern is narrower than `format: uuid` (which also takes a urn:uuid: prefix), so it alone accepts the same;
  // and it is spelt with the three middle groups as one repeat (26 uuids in tools/list, 24 characters each).
  if (out.pattern === UUID_PATTERN) {
    if (out.format === 'uuid') delete out.format;
    out.pattern = SHORT_UUID_PATTERN;
  }
  // `additionalProperties: true` is the default.
  if (out.additionalProperties === true) delete out.additionalProperties;
  return out;
}

/** The same schema, shorter: literal unions as enums, nullable unions as type lists, nothing said twice. */
export function compactSchema<T = Record<string, unknown>>(schema: object): T {
  return compactNode(JSON.parse(JSON.stringify(schema))) as T;
}
