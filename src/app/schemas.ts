import { Type, type TLiteral, type TSchema, type TSchemaOptions, type TUnion } from 'typebox';
import { UUID_PATTERN } from '../lib/ids.js';

export const Uuid = (options: Record<string, unknown> = {}) => Type.String({ format: 'uuid', pattern: UUID_PATTERN, ...options });
export const UserId = (options: Record<string, unknown> = {}) => Type.String({ pattern: '^[1-9][0-9]{0,19}$', ...options });
export const Handle = (options: Record<string, unknown> = {}) => Type.String({ pattern: '^@?[A-Za-z0-9_]{1,15}$', ...options });
export const Timestamp = (options: Record<string, unknown> = {}) => Type.String({ format: 'date-time', ...options });
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const MessagingAccountId = () => Type.String({ pattern: '^onb_[0-9a-fA-F-]{36}$' });

/** The spec's common error body: optional strings, extra properties allowed. */
export const ErrorBody = Type.Object(
  {
    error: Type.Optional(Type.String()),
    message: Type.Optional(Type.String()),
    status: Type.Optional(Type.String()),
    reason: Type.Optional(Type.String()),
  },
  { additionalProperties: true, $id: 'ErrorBody' },
);

const errorDescriptions: Record<number, string> = {
  400: 'invalid input: bad enum value, body, pattern or bound',
  401: 'missing, invalid, unknown, revoked or expired key',
  403: 'workspace mismatch or channel disabled',
  404: 'resource not in this workspace',
  409: 'revision, identity or state conflict',
  429: 'rate limit; respect Retry-After',
  500: 'request failed',
  503: 'dependency unavailable',
};

/** The common error set every operation may return, for the OpenAPI document. */
export function errorResponses(...statuses: number[]) {
  const out: Record<number, TSchema> = {};
  // The spec's common error set: 503 (a dependency such as the database unavailable) may come from any operation.
  for (const status of [...new Set([400, 401, 403, 429, 500, 503, ...statuses])]) {
    out[status] = Type.Object(
      {
        error: Type.Optional(Type.String()),
        message: Type.Optional(Type.String()),
        status: Type.Optional(Type.String()),
        reason: Type.Optional(Type.String()),
      },
      { additionalProperties: true, description: errorDescriptions[status] ?? 'error' },
    );
  }
  return out;
}

export const WorkspaceClientHeader = Type.Object(
  {
    'x-workspace-client': Type.Optional(
      Type.String({ description: 'Selects an authorized Team workspace (uuid). Without it the key’s home workspace is used.' }),
    ),
  },
  { additionalProperties: true },
);

type Literals<T extends readonly string[]> = { -readonly [K in keyof T]: TLiteral<T[K]> };

/** One of a vocabulary list (src/domain), published as `anyOf` single values in the list's order. */
export const OneOf = <const T extends readonly string[]>(values: T, options: TSchemaOptions = {}): TUnion<Literals<T>> =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as TUnion<Literals<T>>;
