// The low-level Server is used on purpose: McpServer.registerTool wants zod shapes, while these tools take their JSON
// Schema straight from the TypeBox definitions the HTTP routes use, so there is one schema language and no conversion.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { Value } from 'typebox/value';
import { AppError } from '../lib/errors.js';
import { forbiddenAction, roleAllows } from '../domain/roles.js';
import type { Services } from '../app/services.js';
import type { AuthContext } from '../modules/workspaces/index.js';
import { invalidInputBody } from './input-validation.js';
import { compactSchema } from './compact-schema.js';
import { ALL_TOOLS, DEPRECATED_TOOL_NAMES, type Tool } from './tools/index.js';

export const MCP_SERVER_INFO = { name: 'workspace-outreach', version: '1.0.0' } as const;

export const MCP_INSTRUCTIONS =
  'Tools of one outreach workspace (the key’s home workspace, or the Team workspace chosen with X-Workspace-Client). ' +
  'Only decide_reply can contact a prospect (send, invite, booking_link). enroll_candidates and set_sequence_status never send ' +
  'by themselves, but an enrolled lead of an active, approved sequence can be messaged by the engine on its next run. ' +
  'Every write tool takes dryRun: true to see what it would do without doing it; a dry run the real call would refuse is a ' +
  'tool error too. Answers are JSON; get_output_schema describes any tool’s answer field by field. Errors are tool errors carrying the API ' +
  'error code (for example {"error":"stale_sequence_revision"}); after a revision conflict, read the current revisions and decide again. ' +
  'Typical flow: create_sequence → approve_sequence → set_sequence_status active → create_play → import_candidates → enroll_candidates.';

export interface McpServerOptions {
  log?: { error(obj: object, msg: string): void };
}

const listings = new WeakMap<Tool, McpTool>();

/**
 * Hints at their MCP defaults (readOnly false, destructive true, idempotent false) are left out, and destructive and
 * idempotent mean something only for a tool that writes; openWorld defaults to true, so it is always said.
 */
function annotationsOf(tool: Tool): McpTool['annotations'] {
  if (tool.readOnly) return { readOnlyHint: true, openWorldHint: tool.openWorld === true };
  return {
    ...(tool.additive && { destructiveHint: false }),
    ...(tool.idempotent && { idempotentHint: true }),
    openWorldHint: tool.openWorld === true,
  };
}

/**
 * What tools/list answers for a tool; built once per process because the definitions never change. No outputSchema:
 * get_output_schema answers it per tool (see output-schema.tool.ts). The annotations' title would repeat `title`.
 */
export function toolListing(tool: Tool): McpTool {
  let listing = listings.get(tool);
  if (!listing) {
    listing = {
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: compactSchema<McpTool['inputSchema']>(tool.input),
      annotations: annotationsOf(tool),
    };
    listings.set(tool, listing);
  }
  return listing;
}

function errorResult(body: Record<string, unknown>): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

/** The API's error body for the same failure, plus the HTTP status it would have had. */
function toErrorBody(error: AppError): Record<string, unknown> {
  const body: Record<string, unknown> = { ...error.body, error: error.code, httpStatus: error.statusCode };
  if (error.message && error.message !== error.code) body.message = error.message;
  const retryAfter = error.headers['retry-after'];
  if (retryAfter) body.retryAfterSeconds = Number(retryAfter);
  return body;
}

/**
 * One server per HTTP request (stateless transport), bound to the caller's already authenticated workspace:
 * a tool can never reach another workspace because the workspace id comes from `auth`, never from arguments.
 */
export function createMcpServer(services: Services, auth: AuthContext, options: McpServerOptions = {}): Server {
  const byName = new Map(ALL_TOOLS.map((t) => [t.name, t]));
  for (const [old, current] of Object.entries(DEPRECATED_TOOL_NAMES)) byName.set(old, byName.get(current)!);
  const server = new Server({ ...MCP_SERVER_INFO }, { capabilities: { tools: { listChanged: false } }, instructions: MCP_INSTRUCTIONS });

  // Only the tools the caller's role may call are listed; a call of another answers 403 forbidden (docs/roles.md).
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: ALL_TOOLS.filter((t) => roleAllows(auth.role, t.action)).map(toolListing) }));

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${request.params.name}`);
    if (!roleAllows(auth.role, tool.action)) return errorResult(toErrorBody(forbiddenAction(auth.role, tool.action)));
    // Validation fills defaults in place, so the caller's object is never the one changed.
    const args = structuredClone<Record<string, unknown>>(request.params.arguments ?? {});
    // Every problem at once, each in the API's words rooted at `arguments` (input-validation.ts).
    if (!tool.validate(args)) return errorResult(invalidInputBody(tool.validate.errors));
    const ctx = { services, auth };
    try {
      if (tool.xChannel) await services.workspaces.assertXChannelEnabled(auth.workspaceId);
      const previewing = args.dryRun === true && tool.dryRun === 'preview';
      const result = previewing ? await tool.preview!(ctx, args) : await tool.run(ctx, args);
      // Fastify serializes HTTP answers through the response schema; cleaning here gives the agent the same fields.
      const out = (previewing ? result : Value.Clean(tool.output, structuredClone(result))) as Record<string, unknown>;
      // The route's answer has no dryRun field; the agent is told which kind of answer this is.
      if (tool.dryRun === 'service') out.dryRun = args.dryRun === true;
      return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
    } catch (error) {
      if (error instanceof AppError) return errorResult(toErrorBody(error));
      options.log?.error({ err: error, tool: tool.name }, 'mcp tool failed');
      return errorResult({ error: 'internal_error', httpStatus: 500, message: 'the tool failed unexpectedly' });
    }
  });

  return server;
}
