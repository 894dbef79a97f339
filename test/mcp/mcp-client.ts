import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Services } from '../../src/app/services.js';
import { createMcpServer } from '../../src/mcp/server.js';
import type { AuthContext } from '../../src/modules/workspaces/workspaces.service.js';

export type ToolAnswer = { ok: true; data: Record<string, any> } | { ok: false; error: Record<string, any> };

/** The SDK's own client over real HTTP, with the headers an MCP client configuration would send. */
export async function connectHttp(url: string, headers: Record<string, string>) {
  const client = new Client({ name: 'outreach-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** The same server without HTTP, for rule-by-rule tests that do not need the transport. */
export async function connectInMemory(services: Services, workspaceId: string) {
  const auth: AuthContext = { keyId: 'test', homeWorkspaceId: workspaceId, workspaceId, role: 'owner', homeRole: 'owner' };
  const server = createMcpServer(services, auth);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'outreach-test', version: '1.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return client;
}

/** Calls a tool and answers its structured result or its API error body. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
  const result = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    structuredContent?: Record<string, any>;
    content: { type: string; text?: string }[];
  };
  const text = result.content.find((c) => c.type === 'text')?.text ?? '{}';
  if (result.isError) return { ok: false, error: JSON.parse(text) };
  return { ok: true, data: result.structuredContent ?? JSON.parse(text) };
}

export async function ok(client: Client, name: string, args: Record<string, unknown> = {}) {
  const r = await call(client, name, args);
  if (!r.ok) throw new Error(`${name} failed: ${JSON.stringify(r.error)}`);
  return r.data;
}

export async function fails(client: Client, name: string, args: Record<string, unknown> = {}) {
  const r = await call(client, name, args);
  if (r.ok) throw new Error(`${name} unexpectedly succeeded: ${JSON.stringify(r.data)}`);
  return r.error;
}

/** A complete, valid step: authoring inputs carry every field of the spec's step object. */
export function step(index: number, over: Record<string, unknown> = {}) {
  return { index, kind: 'x_dm', delayDays: 0, subject: null, message: 'Hi {{firstName|there}}', actions: [], variants: null, tool: null, ...over };
}
