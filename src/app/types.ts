import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AuthContext } from '../domain/auth-context.js';
import type { Action } from '../domain/roles.js';

export type AppInstance = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression<RawServerDefault>,
  RawReplyDefaultExpression<RawServerDefault>,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export interface Deprecation {
  /** The removal date: at least 90 days after the route is marked. */
  sunset: string;
  link?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext;
  }
  interface FastifyContextConfig {
    deprecation?: Deprecation;
    /** Public routes answer without a key. */
    public?: boolean;
    /**
     * What the route does, for the role check (src/domain/roles.ts, docs/roles.md). A GET is `read` unless it says
     * otherwise; any other method without an action refuses to register.
     */
    action?: Action;
    /** Social-network routes answer 403 channel_disabled while the workspace has the X channel off. */
    xChannel?: boolean;
  }
}
