import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

// Bodies are validated strictly: the spec rejects unknown properties (400) and never accepts a JSON
// number where a string user id is required, so no coercion and no stripping. Query strings, params
// and headers arrive as text and must be coerced to their declared types.
function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes: coerce ? 'array' : false,
    removeAdditional: false,
    useDefaults: true,
    allErrors: false,
    // Errors carry their schema, so a message can list the allowed values and properties (only read on failure).
    verbose: true,
    strict: false,
  });
  addFormats(ajv);
  return ajv;
}

const bodyAjv = makeAjv(false);
const textAjv = makeAjv(true);
const cache = new WeakMap<object, ValidateFunction>();

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  compiledOnFirstUse(() => {
    const ajv = httpPart === 'body' ? bodyAjv : textAjv;
    const key = schema as object;
    const cached = httpPart === 'body' ? cache.get(key) : undefined;
    if (cached) return cached;
    const fn = ajv.compile(schema as object);
    if (httpPart === 'body') cache.set(key, fn);
    return fn;
  }) as never;

/**
 * A route's validator or serializer, compiled when a request first needs it rather than when the app starts: start-up
 * compiled a few hundred of them (about 350 ms of CPU), most of which a process never uses. Fastify reads a failed
 * validation's `errors` from the function it was given, so they are passed through.
 */
function compiledOnFirstUse<F extends (data: never) => unknown>(compile: () => F): F {
  let fn: F | null = null;
  const wrapper = ((data: never) => (fn ??= compile())(data)) as F;
  Object.defineProperty(wrapper, 'errors', { get: () => (fn as { errors?: unknown } | null)?.errors ?? null });
  return wrapper;
}

const defaultSerializers = SerializerSelector();

/**
 * Fastify's own response serializers (fast-json-stringify, with the app's shared schemas), each compiled on first use
 * (Fastify option `schemaController.compilersFactory.buildSerializer`).
 */
export const buildLazySerializer: typeof defaultSerializers = (externalSchemas, options) => {
  const compile = defaultSerializers(externalSchemas, options);
  return (route) => compiledOnFirstUse(() => compile(route));
};

/** Used outside HTTP (world files, MCP tool input) with the same strict rules as request bodies. */
export function compileStrict(schema: object): ValidateFunction {
  return bodyAjv.compile(schema);
}

const quote = (v: unknown) => (typeof v === 'string' ? `"${v}"` : JSON.stringify(v));
const list = (values: unknown[]) => values.map(quote).join(', ');

/** `body`, `querystring/filter`, `body/leads/3/userId`: the part of the request, then the JSON pointer. */
const fieldOf = (root: string, instancePath: string) => `${root}${instancePath}`;

function describeOne(e: ErrorObject, root: string): string {
  const field = fieldOf(root, e.instancePath);
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties': {
      const allowed = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      const name = String(params.additionalProperty);
      return `${field}/${name} is not allowed: ${field} has no property "${name}"${allowed.length ? ` (allowed: ${allowed.join(', ')})` : ''}`;
    }
    case 'required':
      return `${field}/${String(params.missingProperty)} is required`;
    case 'enum':
      return `${field} must be one of: ${list(params.allowedValues as unknown[])}`;
    case 'const':
      return `${field} must be ${quote(params.allowedValue)}`;
    case 'type':
      return `${field} must be of type ${String(params.type)}`;
    default:
      return `${field} ${e.message ?? `fails the ${e.keyword} rule`}`;
  }
}

/**
 * One message that names the field, the rule and, where the schema has them, the allowed values or properties:
 * `querystring/filter must be one of: "all", "unreviewed", …` instead of Ajv's `must be equal to constant` and
 * `must match a schema in anyOf`. Never includes the rejected value (it could be a secret pasted in the wrong place).
 */
export function describeValidationErrors(errors: readonly ErrorObject[], root: string): string {
  const union = errors.find((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  if (union) {
    const branches = errors.filter((e) => e.instancePath === union.instancePath && e !== union);
    const field = fieldOf(root, union.instancePath);
    if (
      branches.length > 0 &&
      branches.every((e) => e.keyword === 'const' || e.keyword === 'enum' || (e.keyword === 'type' && (e.params as { type?: string }).type === 'null'))
    ) {
      const allowed = branches.flatMap((e) => {
        const p = e.params as { allowedValue?: unknown; allowedValues?: unknown[] };
        return e.keyword === 'const' ? [p.allowedValue] : e.keyword === 'enum' ? (p.allowedValues ?? []) : [null];
      });
      return `${field} must be one of: ${list(allowed)}`;
    }
    if (branches.length > 0 && branches.every((e) => e.keyword === 'type')) {
      return `${field} must be of type ${branches.map((e) => String((e.params as { type?: string }).type)).join(' or ')}`;
    }
    const deepest = errors.filter((e) => e !== union && e.instancePath.length > union.instancePath.length)[0];
    if (deepest) return describeOne(deepest, root);
    return `${field} does not match any allowed form${branches[0] ? ` (${describeOne(branches[0], root)})` : ''}`;
  }
  return errors.length > 0 ? describeOne(errors[0], root) : `${root} is invalid`;
}

/** Fastify's schemaErrorFormatter: the same message for bodies, query strings, params and headers. */
export function formatSchemaErrors(errors: readonly unknown[], dataVar: string): Error {
  return new Error(describeValidationErrors(errors as ErrorObject[], dataVar));
}
