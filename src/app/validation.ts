import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

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
    strict: false,
  });
  addFormats(ajv);
  return ajv;
}

const bodyAjv = makeAjv(false);
const textAjv = makeAjv(true);
const cache = new WeakMap<object, ValidateFunction>();

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  const key = schema as object;
  if (httpPart === 'body') {
    const cached = cache.get(key);
    if (cached) return cached as never;
  }
  const fn = ajv.compile(schema as object);
  if (httpPart === 'body') cache.set(key, fn);
  return fn as never;
};

/** Used outside HTTP (world files, MCP tool input) with the same strict rules as request bodies. */
export function compileStrict(schema: object): ValidateFunction {
  return bodyAjv.compile(schema);
}
