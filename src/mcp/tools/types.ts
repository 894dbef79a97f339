import { Type, type Static, type TObject, type TSchema } from 'typebox';
import type { ValidateFunction } from 'ajv';
import { compileToolInput } from '../input-validation.js';
import type { AuthContext } from '../../modules/workspaces/index.js';
import type { Action } from '../../domain/roles.js';

export interface ToolContext<S> {
  services: S;
  auth: AuthContext;
}

/** The HTTP operation a tool mirrors; the schema-agreement test compares the tool input with that route's schemas. */
export interface Mirror {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  url: string;
  /** A bare `id` means nothing to an agent juggling Plays, sequences and leads, so path ids get a named property. */
  params?: Record<string, string>;
  headers?: Record<string, string>;
}

export interface ToolDefinition<S, I extends TObject> {
  name: string;
  /** What the tool does, for the role check (src/domain/roles.ts): tools/list shows only what the caller's role allows. */
  action: Action;
  title: string;
  /** Ends with a Safety line (whether it can contact a prospect, what it never does): agents decide from this text alone. */
  description: string;
  input: I;
  /** The route's 200 schema, so an agent and an HTTP client see the same fields. */
  output: TObject;
  /** Social-network tools answer 403 channel_disabled while the workspace has the X channel off, like their routes. */
  xChannel?: boolean;
  /**
   * `service`: the service runs its real transaction and rolls back (every write tool whose service has no effect
   * outside the database). `preview`: the tool answers from read-only calls, because the writing service acts outside
   * the database (a reply decision messages the prospect), which no rollback undoes; only decide_reply.
   */
  dryRun?: 'service' | 'preview';
  contactsProspects: boolean;
  readOnly: boolean;
  openWorld?: boolean;
  idempotent?: boolean;
  /** Only adds new rows (a new sequence, Play or candidate batch); never changes or removes existing ones. */
  additive?: boolean;
  mirrors?: Mirror;
  run(ctx: ToolContext<S>, args: Static<I>): Promise<object>;
  preview?(ctx: ToolContext<S>, args: Static<I>): Promise<object>;
}

export interface Tool extends Omit<ToolDefinition<Record<string, unknown>, TObject>, 'run' | 'preview'> {
  validate: ValidateFunction;
  run(ctx: ToolContext<unknown>, args: unknown): Promise<object>;
  preview?(ctx: ToolContext<unknown>, args: unknown): Promise<object>;
}

/**
 * Compiles the input validator once per process: servers are created per request, tool definitions are not. The
 * request-body rules with every error collected (input-validation.ts).
 */
export function defineTool<S, I extends TObject>(def: ToolDefinition<S, I>): Tool {
  return { ...(def as unknown as Tool), validate: compileToolInput(def.input) };
}

export const DryRunFlag = Type.Optional(Type.Boolean({ default: false, description: 'true: answer what the call would do and change nothing' }));

/** What a previewing write tool answers under dryRun: the facts the real call would check, never a write. */
export const DryRunPreview = Type.Object(
  {
    dryRun: Type.Literal(true),
    operation: Type.String(),
    wouldDo: Type.String({ description: 'plain-language summary of what the real call would do' }),
    contactsProspect: Type.Boolean({ description: 'true only when the real call would message a prospect' }),
    blockers: Type.Array(Type.Object({ error: Type.String(), message: Type.String() }), {
      description: 'conflicts the real call would answer with, as far as read-only checks can tell; empty when none were found',
    }),
  },
  { additionalProperties: true },
);

/** MCP wants an object at the root, so a write tool's answer is "the HTTP response or a dry-run preview" under type: object. */
export function orPreview(response: TSchema): TObject {
  return { type: 'object', anyOf: [response, DryRunPreview] } as unknown as TObject;
}

export const READ_ONLY_SAFETY = 'Safety: contacts a prospect: no. Read-only: changes nothing.';
