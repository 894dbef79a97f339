import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimitStore } from '../app/plugins/rate-limit.js';
import { createAuthHook } from '../app/plugins/auth.js';
import type { Services } from '../app/services.js';
import type { AppInstance } from '../app/types.js';

// The MCP SDK (and the tool schemas) cost about half a second of CPU to load, so a server loads them at its first
// /mcp request instead of at every start; later requests reuse the loaded modules.
let mcpModules: Promise<[typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js'), typeof import('./server.js')]> | null = null;
const loadMcpModules = () => (mcpModules ??= Promise.all([import('@modelcontextprotocol/sdk/server/streamableHttp.js'), import('./server.js')]));

export const MCP_PATH = '/mcp';

export interface McpHttpOptions {
  services: Services;
  /** The API's store, so a key has one per-minute budget across the API and the agent tools. */
  rateLimitStore: RateLimitStore;
  rateLimitPerMinute: number;
}

const jsonRpcError = (code: number, message: string) => ({ jsonrpc: '2.0', error: { code, message }, id: null });

/**
 * Streamable HTTP in stateless mode: every POST gets a fresh server and transport bound to the workspace its key
 * selected, so no session state outlives a request and any process of the service can answer any call.
 */
export async function mcpRoutes(app: AppInstance, opts: McpHttpOptions) {
  const { services, rateLimitStore, rateLimitPerMinute } = opts;

  // The same key, budget and workspace rules as /api/v1 (one hook), answered by the same error handler.
  app.addHook('onRequest', createAuthHook({ workspaces: services.workspaces, rateLimitStore, rateLimitPerMinute }));

  app.post(MCP_PATH, { schema: { hide: true } }, async (req: FastifyRequest, reply: FastifyReply) => {
    // Fastify has already read the stream; without a parsed body the transport would wait for bytes that never come.
    if (req.body === undefined) return reply.status(400).send(jsonRpcError(-32700, 'Parse error: empty body'));
    const [{ StreamableHTTPServerTransport }, { createMcpServer }] = await loadMcpModules();
    const server = createMcpServer(services, req.auth, { log: req.log });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    // A hijacked reply skips Fastify's header handling, so the headers already decided are copied over by hand.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    reply.raw.setHeader('x-request-id', req.id);
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req.raw, reply.raw, req.body);
    } catch (error) {
      req.log.error({ err: error }, 'mcp request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify(jsonRpcError(-32603, 'Internal error')));
      }
    }
  });

  // Stateless mode has no session to stream to or terminate; the MCP transport spec answers such GET and DELETE with 405.
  const notAllowed = async (_req: FastifyRequest, reply: FastifyReply) =>
    reply.status(405).header('allow', 'POST').send(jsonRpcError(-32000, 'Method not allowed: this server is stateless, use POST'));
  app.get(MCP_PATH, { schema: { hide: true } }, notAllowed);
  app.delete(MCP_PATH, { schema: { hide: true } }, notAllowed);
}
