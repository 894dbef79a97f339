// Tool input is checked against the TypeBox schema with the request-body rules (no coercion, defaults filled, unknown
// properties refused), like compileStrict, but with every error collected: an agent fixes all of its arguments in one
// round instead of learning of one missing field per call (docs/mcp.md "Inputs, outputs and errors").
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describeValidationErrors } from '../app/validation.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const ajv = new Ajv({ coerceTypes: false, removeAdditional: false, useDefaults: true, allErrors: true, verbose: true, strict: false });
addFormats(ajv);

/** At most this many problems are listed; the rest are counted (a 50-step array can fail in hundreds of places). */
export const MAX_LISTED_ERRORS = 20;

/** Compiles a tool's input validator once per process (tool definitions never change). */
export function compileToolInput(schema: object): ValidateFunction {
  return ajv.compile(schema);
}

export interface InputProblem {
  /** `arguments/steps/0/kind`: the argument's JSON pointer under `arguments`. */
  field: string;
  /** The API's wording (describeValidationErrors): the field, the rule and the allowed values, never the value. */
  message: string;
}

const isUnion = (e: ErrorObject) => e.keyword === 'anyOf' || e.keyword === 'oneOf';

/** The argument an error is about: the missing or unknown property itself, else the value that broke the rule. */
function fieldOf(e: ErrorObject, root: string): string {
  const params = e.params as { missingProperty?: string; additionalProperty?: string };
  if (e.keyword === 'required') return `${root}${e.instancePath}/${params.missingProperty}`;
  if (e.keyword === 'additionalProperties') return `${root}${e.instancePath}/${params.additionalProperty}`;
  return `${root}${e.instancePath}`;
}

/**
 * Every problem of one failed validation, each once, in the order Ajv found them. A union (`anyOf`, TypeBox's
 * nullable and literal unions) is described as one problem from its own errors and its branches' (the API's
 * wording: `must be one of: …`, `must be of type string or null`); an `if` (a rule that applies to some kinds of
 * step) adds nothing beyond the errors of its `then`.
 */
export function describeInputProblems(errors: readonly ErrorObject[] | null | undefined, root = 'arguments'): InputProblem[] {
  const all = errors ?? [];
  const consumed = new Set<ErrorObject>();
  const problems: InputProblem[] = [];
  const seen = new Set<string>();
  const add = (field: string, message: string) => {
    if (seen.has(message)) return;
    seen.add(message);
    problems.push({ field, message });
  };
  // Outermost unions first, so a union inside a branch of another is described with its outer union.
  const unions = all.filter(isUnion).sort((a, b) => a.schemaPath.length - b.schemaPath.length);
  const groups = new Map<ErrorObject, ErrorObject[]>();
  for (const union of unions) {
    if (consumed.has(union)) continue;
    const members = all.filter((e) => e !== union && !consumed.has(e) && e.schemaPath.startsWith(`${union.schemaPath}/`));
    for (const e of [union, ...members]) consumed.add(e);
    groups.set(union, members);
  }
  for (const e of all) {
    const members = groups.get(e);
    if (members) add(`${root}${e.instancePath}`, describeValidationErrors([e, ...members], root));
    else if (!consumed.has(e) && e.keyword !== 'if') add(fieldOf(e, root), describeValidationErrors([e], root));
  }
  return problems;
}

/**
 * The tool error body for input that failed validation: `{error: "invalid_request", httpStatus: 400, message,
 * errors}`, where `message` joins every problem with "; " and `errors` lists them as `{field, message}` (at most
 * MAX_LISTED_ERRORS; `message` then says how many more there were).
 */
export function invalidInputBody(errors: readonly ErrorObject[] | null | undefined): Record<string, unknown> {
  const problems = describeInputProblems(errors);
  const listed = problems.slice(0, MAX_LISTED_ERRORS);
  const more = problems.length - listed.length;
  const message = listed.map((p) => p.message).join('; ') + (more > 0 ? `; and ${more} more` : '');
  return { error: 'invalid_request', httpStatus: 400, message: message || 'arguments is invalid', errors: listed };
}
