// The hx-* attribute types for TSX (a type reference: the runtime import prints a deprecation warning).
/// <reference types="@kitajs/html/htmx.d.ts" />
import type {} from '@fastify/csrf-protection';
import type { ConsoleSession } from '../modules/console-sessions/index.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The console session behind the request's cookie, or null (set on console routes only). */
    consoleSession: ConsoleSession | null;
    /** What this request's CSRF tokens are bound to: the hash of its session cookie, or `no-session`. */
    consoleCsrfBinding: string;
    /** The console's cookies are `Secure` and `__Host-`-prefixed (OUTREACH_PUBLIC_URL is https). */
    consoleSecureCookies: boolean;
    /** The form's act was refused and said so in a notice (not recorded in the audit trail). */
    consoleRefused: boolean;
  }
  interface FastifyContextConfig {
    /** Console routes that answer without a session (sign-in, login links, assets). */
    consolePublic?: boolean;
  }
}

export type { ConsoleSession };
