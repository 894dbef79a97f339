import type { Command } from 'commander';
import { createClient, type OutreachClient } from '@workspace-outreach/client';
import { CliError } from '../admin-backend.js';

/** The API commands (tail, import, listen, trigger) talk to a running server over HTTP with a workspace key. */
export interface ApiOptions {
  key?: string;
  url?: string;
  client?: string;
  json?: boolean;
}

export const DEFAULT_API_URL = 'http://127.0.0.1:8080';

export function withApiOptions(cmd: Command): Command {
  return cmd
    .option('--key <key>', 'workspace API key (default: OUTREACH_API_KEY)')
    .option('--url <url>', `server address (default: OUTREACH_URL or ${DEFAULT_API_URL})`)
    .option('--client <workspaceId>', 'Team selector: act on this client workspace (X-Workspace-Client)');
}

export interface ApiTarget {
  client: OutreachClient;
  baseUrl: string;
  key: string;
  workspaceClient?: string;
  /** Headers for calls made without the typed client (the event stream). */
  headers: Record<string, string>;
}

export function resolveApi(opts: ApiOptions): ApiTarget {
  const key = opts.key ?? process.env.OUTREACH_API_KEY;
  if (!key) throw new CliError('a workspace key is needed: pass --key or set OUTREACH_API_KEY (create one with `outreach key create --workspace <id>`)');
  const raw = opts.url ?? process.env.OUTREACH_URL ?? DEFAULT_API_URL;
  let baseUrl: string;
  try {
    const u = new URL(raw);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http');
    baseUrl = u.origin + u.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  } catch {
    throw new CliError(`--url must be an http(s) address, got ${JSON.stringify(raw)}`);
  }
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (opts.client) headers['x-workspace-client'] = opts.client;
  // Every command says which server it talks to (on stderr, so that --json output stays parseable).
  process.stderr.write(`outreach: server ${baseUrl}${opts.client ? ` (client workspace ${opts.client})` : ''}\n`);
  return { client: createClient({ baseUrl, apiKey: key, workspaceClient: opts.client }), baseUrl, key, workspaceClient: opts.client, headers };
}

/** An API error answer as a CliError carrying the spec body (printed with --json). */
export function apiError(what: string, status: number, error: unknown): CliError {
  const body = error && typeof error === 'object' ? (error as { error?: string; message?: string }) : undefined;
  const detail = body?.message ?? body?.error ?? `HTTP ${status}`;
  return new CliError(`${what}: ${status} ${detail}`, body && body.error ? body : null);
}

export const commaList = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
