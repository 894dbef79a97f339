import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AuthContext } from '../domain/auth-context.js';

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
    /** Social-network routes answer 403 channel_disabled while the workspace has the X channel off. */
    xChannel?: boolean;
  }
}
